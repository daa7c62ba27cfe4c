/**
 * The ring in force: {@link io.fieldline.cluster.ring.RingKeeper} turns the membership's snapshots
 * into the {@link io.fieldline.cluster.ClusterView} routing reads (the {@link
 * io.fieldline.cluster.HashRing}, the members' addresses, this node's own claim), applying a change
 * of the other members after the rebalance delay and a change of this node's claim at once.
 *
 * <p>Second step of the cluster's flow: after {@code membership}, before the gateway's owner lookup
 * and {@code forward}. The ring and the view are values of the module's API, in the root package;
 * this package keeps them current. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.ring;

import org.jspecify.annotations.NullMarked;
