/**
 * Forwarding device messages to their owner node over one gRPC bidirectional stream per peer: the
 * sending end ({@link io.fieldline.cluster.forward.Forwarder}, {@link
 * io.fieldline.cluster.forward.PeerStream}) and the owner's end ({@link
 * io.fieldline.cluster.forward.ForwardingService}). Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.forward;

import org.jspecify.annotations.NullMarked;
