/**
 * One MQTT session per device across the cluster: notices sent to the other nodes when a device
 * connects here ({@link io.fieldline.cluster.takeover.GrpcSessionTakeover}, the transport's {@link
 * io.fieldline.common.port.SessionTakeover}), and the service that receives them ({@link
 * io.fieldline.cluster.takeover.TakeoverService}) and closes this node's session through the
 * transport's {@link io.fieldline.common.port.SessionCloser}.
 *
 * <p>Beside the message path: it runs when a session opens, not per message. Channels come from
 * {@code peer}. Internal to the cluster module.
 */
@NullMarked
package io.fieldline.cluster.takeover;

import org.jspecify.annotations.NullMarked;
