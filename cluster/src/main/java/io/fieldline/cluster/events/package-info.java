/**
 * Device events across the cluster: an event published on any node (an attribute push, a
 * server-side RPC offered to the device's session, a session subscribing to RPCs) reaches the
 * device's listeners on every node, over one ordered gRPC stream per (sender, receiver) pair
 * ({@link io.fieldline.cluster.events.GrpcDeviceEvents}, the cluster's {@link
 * io.fieldline.common.events.DeviceEvents}); the progress of an RPC taken on one node goes back to
 * the node whose caller waits for it, on the same streams.
 *
 * <p>Beside the message path: it runs when the REST API changes shared attributes or sends an RPC,
 * and when a session subscribes. Channels come from {@code peer}. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.events;

import org.jspecify.annotations.NullMarked;
