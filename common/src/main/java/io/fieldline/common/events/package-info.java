/**
 * Device events (attribute pushes, server-side RPCs offered to a session, stored telemetry for live
 * watchers) and the port that carries them to every listener of a device: {@link
 * io.fieldline.common.events.DeviceEvents}, local here, cluster-wide in {@code cluster.events}.
 *
 * <p>Beside the message path: the REST API and the device actors publish, the transports' sessions
 * and the WebSocket listen.
 */
@NullMarked
package io.fieldline.common.events;

import org.jspecify.annotations.NullMarked;
