/**
 * Over-the-air packages in the fleet module (issue 17, ThingsBoard's OTA): a device's firmware
 * assignment and the shared attributes it pushes ({@link
 * io.fieldline.fleet.ota.FirmwareAssignments}), the fan-out of a profile's firmware to its devices
 * ({@link io.fieldline.fleet.ota.ProfileFanOuts}), the cache of stored chunks that downloads read
 * through ({@link io.fieldline.fleet.ota.FirmwareCache}), bound together by {@link
 * io.fieldline.fleet.ota.OtaPackages} for the REST API (which also streams uploads into the store)
 * and, as common's {@code FirmwareSource}, for both device transports' downloads. Only common's
 * ports below it: the server wires it to storage and events.
 */
@NullMarked
package io.fieldline.fleet.ota;

import org.jspecify.annotations.NullMarked;
