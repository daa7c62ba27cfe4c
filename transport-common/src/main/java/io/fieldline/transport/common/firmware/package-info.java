/**
 * Firmware downloads, the same for both device transports: their bounds ({@link
 * io.fieldline.transport.common.firmware.FirmwareConfig}, {@code fieldline.mqtt.firmware}), where
 * they read (common's {@code FirmwareSource}, the fleet's cache over the store) and where they are
 * counted ({@link io.fieldline.transport.common.firmware.FirmwareMetrics}), bound together in
 * {@link io.fieldline.transport.common.firmware.FirmwareDelivery}, which the composition root
 * builds once and hands to both transports. MQTT serves chunks on {@code v2/fw/response}, HTTP on
 * {@code GET /api/v1/{token}/firmware}.
 */
@NullMarked
package io.fieldline.transport.common.firmware;

import org.jspecify.annotations.NullMarked;
