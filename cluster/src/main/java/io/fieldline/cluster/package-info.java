/**
 * Fieldline's cluster: nodes register in ZooKeeper, derive the same consistent-hash ring of devices
 * to nodes from the membership, and forward each device message over gRPC to the node that owns the
 * device, which stores it and answers with the acknowledgement.
 *
 * <p>This package is what the server uses: {@link io.fieldline.cluster.ClusterNode} (the module's
 * composition root and lifecycle) built from a {@link io.fieldline.cluster.ClusterConfig}; the
 * {@link io.fieldline.cluster.ClusterDeviceInbox}, the {@link
 * io.fieldline.common.port.SessionTakeover} and the {@link io.fieldline.common.events.DeviceEvents}
 * it offers the transport; the values routing reads ({@link io.fieldline.cluster.ClusterView},
 * {@link io.fieldline.cluster.HashRing}, {@link io.fieldline.cluster.Member}); the meters ({@link
 * io.fieldline.cluster.ClusterMetrics}).
 *
 * <p>The subpackages are internal, in the order a message meets them:
 *
 * <ol>
 *   <li>{@code membership}: Curator keeps this node's znode and reports every change of the members
 *       as a snapshot;
 *   <li>{@code ring}: the snapshots become the view in force (ring, addresses, own claim), after
 *       the rebalance delay;
 *   <li>the {@code ClusterDeviceInbox} (here) names the device's owner in that view: this node's
 *       device actors, or
 *   <li>{@code forward}: one gRPC stream per owner, both ends (the sender's and the owner's, which
 *       hands the message to its device actor and streams the verdict back);
 *   <li>{@code peer}: the gRPC channels to the other nodes that {@code forward}, {@code takeover},
 *       {@code revocation} and {@code events} share.
 * </ol>
 *
 * <p>Beside the message path, {@code takeover} keeps one MQTT session per device across the
 * cluster, {@code revocation} makes a replaced credential stop working on every node, and {@code
 * events} carries device events (attribute pushes, server-side RPC) to the device's session on
 * whichever node holds it, and the RPC's progress back to its caller.
 */
@NullMarked
package io.fieldline.cluster;

import org.jspecify.annotations.NullMarked;
