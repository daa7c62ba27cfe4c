/**
 * Over-the-air packages on the server (issue 17, ThingsBoard's OTA): the upload of a package's data
 * streamed into storage chunk by chunk with its checksum ({@link
 * io.fieldline.server.ota.PackageUpload}), a device's firmware assignment and the shared attributes
 * it pushes ({@link io.fieldline.server.ota.FirmwareAssignments}), the cache of stored chunks that
 * downloads read through ({@link io.fieldline.server.ota.FirmwareCache}), bound together for the
 * REST API, the HTTP device API and the MQTT transport by {@link
 * io.fieldline.server.ota.OtaPackages}.
 */
@NullMarked
package io.fieldline.server.ota;

import org.jspecify.annotations.NullMarked;
