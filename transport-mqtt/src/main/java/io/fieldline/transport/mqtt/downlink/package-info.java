/**
 * Beside the message path, in the other direction: what the server sends to a device. {@link
 * io.fieldline.transport.mqtt.downlink.Downlink} is one connection's side of it — it listens to its
 * device's events (shared-attribute pushes, server-side RPC), puts what it takes in the session's
 * bounded {@link io.fieldline.transport.mqtt.downlink.Outbound} queue, sends it within the QoS 1
 * window, retransmits and hands unacknowledged messages to the next connection of a kept session;
 * {@link io.fieldline.transport.mqtt.downlink.ServerRpcs} follows each RPC to its answer. A
 * gateway's session also listens to its children ({@code DownlinkRoute} gives their topics and
 * shapes). Shared by the features like {@code session}: the publish path answers attribute requests
 * (through the connection's paced {@link io.fieldline.transport.mqtt.downlink.AttributeReads}) and
 * routes RPC answers through it, the gateway path tells it which children to listen to, the
 * subscribe path announces RPC subscriptions.
 */
@NullMarked
package io.fieldline.transport.mqtt.downlink;

import org.jspecify.annotations.NullMarked;
