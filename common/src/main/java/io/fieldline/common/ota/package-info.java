/**
 * Over-the-air packages, ThingsBoard's OTA vocabulary: a package ({@link
 * io.fieldline.common.ota.OtaPackageInfo}) with its uploaded data ({@link
 * io.fieldline.common.ota.OtaPackageData}) and checksum ({@link
 * io.fieldline.common.ota.ChecksumAlgorithm}), assigned to devices as their firmware. Two ports:
 * the administration of packages, their data and their assignments ({@link
 * io.fieldline.common.ota.OtaPackageStore}, the REST API's), and the narrow read side a device's
 * download needs ({@link io.fieldline.common.ota.FirmwareSource}, the MQTT transport's and the HTTP
 * device API's).
 */
@NullMarked
package io.fieldline.common.ota;

import org.jspecify.annotations.NullMarked;
