/**
 * Step 3 of the message path for both device transports: a telemetry or attributes payload, a
 * gateway's payload for its child devices, parsed from ThingsBoard JSON into common's {@code
 * DeviceMessage}s ({@link io.fieldline.transport.common.payload.PayloadParser}, {@link
 * io.fieldline.transport.common.payload.GatewayPayloadParser}), and what a transport does with one
 * it cannot parse ({@link io.fieldline.transport.common.payload.InvalidPayloadPolicy}). Stateless;
 * called on the transport's own threads (MQTT event loops, Pekko HTTP's dispatcher).
 */
@NullMarked
package io.fieldline.transport.common.payload;

import org.jspecify.annotations.NullMarked;
