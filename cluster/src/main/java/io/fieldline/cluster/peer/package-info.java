/**
 * gRPC channels to the other nodes, one per peer, created on first use and closed when the peer
 * leaves the ring and the membership; and {@link io.fieldline.cluster.peer.PeerStream}, the one
 * client of the cluster's bidirectional streams to a peer ({@code forward} and {@code events} each
 * keep one per peer on it).
 *
 * <p>Under the cluster's flow: {@code forward}, {@code takeover}, {@code revocation} and {@code
 * events} reach peers through it, and log their failures to reach them through {@code
 * common.log.LogThrottle} (one WARN per 10 s per budget, the rest at DEBUG). Internal to the
 * cluster module.
 */
@NullMarked
package io.fieldline.cluster.peer;

import org.jspecify.annotations.NullMarked;
