/**
 * Forwarding device messages to their owner node over one gRPC bidirectional stream per peer: the
 * sending end ({@link io.fieldline.cluster.forward.Forwarder}, {@link
 * io.fieldline.cluster.forward.ForwardStream}) and the owner's end ({@link
 * io.fieldline.cluster.forward.ForwardingService}), with {@link
 * io.fieldline.cluster.forward.MessageCodec} between the domain records and the wire.
 *
 * <p>Third step of the cluster's flow: the gateway calls it for a device another node owns, as the
 * ring in force names it; the owner's end hands the message to that node's own device actors and
 * streams the verdict back. Channels come from {@code peer}. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.forward;

import org.jspecify.annotations.NullMarked;
