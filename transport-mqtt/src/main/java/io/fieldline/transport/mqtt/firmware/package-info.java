/**
 * Beside the message path: firmware downloads over MQTT, ThingsBoard's {@code
 * v2/fw/request/{requestId}/chunk/{n}} answered on {@code v2/fw/response/{requestId}/chunk/{n}}
 * ({@link io.fieldline.transport.mqtt.firmware.FirmwareRequests}), read through the {@code common}
 * port {@link io.fieldline.common.ota.FirmwareSource}, bounded by {@code fieldline.mqtt.firmware}
 * ({@link io.fieldline.transport.mqtt.firmware.FirmwareConfig}) and counted in {@code
 * fieldline.ota.*} ({@link io.fieldline.transport.mqtt.firmware.FirmwareMetrics}, which the HTTP
 * device API's downloads count in too).
 */
@NullMarked
package io.fieldline.transport.mqtt.firmware;

import org.jspecify.annotations.NullMarked;
