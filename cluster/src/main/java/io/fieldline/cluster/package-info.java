/**
 * Fieldline's cluster: nodes register in ZooKeeper, derive the same consistent-hash ring of devices
 * to nodes from the membership, and forward each device message over gRPC to the node that owns the
 * device, which stores it and answers with the acknowledgement.
 *
 * <p>{@link io.fieldline.cluster.ClusterNode} is the entry point; it offers the transport a {@link
 * io.fieldline.common.DeviceGateway} and a {@link io.fieldline.common.SessionTakeover}. The
 * subpackages are internal: {@code membership} (Curator), {@code peer} (gRPC channels), {@code
 * forward} (the forwarding stream, both ends), {@code takeover} (one session per device).
 */
@NullMarked
package io.fieldline.cluster;

import org.jspecify.annotations.NullMarked;
