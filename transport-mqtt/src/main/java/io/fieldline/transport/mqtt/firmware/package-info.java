/**
 * What firmware downloads share, over MQTT ({@code v2/fw/request/{requestId}/chunk/{n}}, answered
 * by the PUBLISH path's {@code publish.FirmwareRequests}) and over the HTTP device API: the bounds
 * ({@link io.fieldline.transport.mqtt.firmware.FirmwareConfig}, {@code fieldline.mqtt.firmware}),
 * the meters ({@link io.fieldline.transport.mqtt.firmware.FirmwareMetrics}, {@code
 * fieldline.ota.*}) and where the firmware is read (the {@code common} port {@link
 * io.fieldline.common.ota.FirmwareSource}), bundled for the sessions in {@link
 * io.fieldline.transport.mqtt.firmware.FirmwareDelivery}. A leaf package: it depends on no other
 * package of the transport, so the session context can carry it.
 */
@NullMarked
package io.fieldline.transport.mqtt.firmware;

import org.jspecify.annotations.NullMarked;
