/**
 * ZooKeeper membership through Curator: this node's ephemeral znode and the watched set of all
 * members, reported as {@link io.fieldline.cluster.membership.MembershipSnapshot}s.
 *
 * <p>First step of the cluster's flow: its snapshots feed {@code ring}. The only package that knows
 * Curator or ZooKeeper. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.membership;

import org.jspecify.annotations.NullMarked;
