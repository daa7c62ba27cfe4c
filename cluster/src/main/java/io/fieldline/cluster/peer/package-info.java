/**
 * gRPC channels to the other nodes, one per peer, created on first use and closed when the peer
 * leaves the ring and the membership.
 *
 * <p>Under the cluster's flow: {@code forward} and {@code takeover} reach peers through it.
 * Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.peer;

import org.jspecify.annotations.NullMarked;
