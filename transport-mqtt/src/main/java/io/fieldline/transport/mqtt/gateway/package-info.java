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
 *
 * <p>The other direction: the session's downlink listens to each child the session holds ({@code
 * GatewayChildren} tells it which), so a child's shared attributes and server-side RPC reach the
 * gateway on {@code v1/gateway/attributes} and {@code v1/gateway/rpc}; {@code GatewayRequests}
 * answers {@code v1/gateway/attributes/request} and routes the gateway's RPC answers ({@code
 * ChildRequests} parses both).
 */
@NullMarked
package io.fieldline.transport.mqtt.gateway;

import org.jspecify.annotations.NullMarked;
