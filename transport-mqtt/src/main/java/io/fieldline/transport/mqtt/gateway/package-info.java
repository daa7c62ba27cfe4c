/**
 * ThingsBoard's gateway API on a gateway's session: one connection publishing for many child
 * devices on {@code v1/gateway/connect}, {@code disconnect}, {@code telemetry} and {@code
 * attributes}. {@link io.fieldline.transport.mqtt.gateway.GatewayPublishes} (called by the publish
 * path for a session whose device is a gateway) parses the message ({@code common}'s {@code
 * GatewayPayloadParser}), checks the session's bounds, resolves each child by name ({@code
 * GatewayChildren}: found or created through the device registry and linked to its gateway) and
 * submits one message per child to the device gateway; the PUBLISH is acknowledged once every
 * child's rows are stored. {@code GatewayTimestamps} keeps, with the session, the receive time
 * given to an unacknowledged message, so that its retransmission stores no second copy.
 */
@NullMarked
package io.fieldline.transport.mqtt.gateway;

import org.jspecify.annotations.NullMarked;
