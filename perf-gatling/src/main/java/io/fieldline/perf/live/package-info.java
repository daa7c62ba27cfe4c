/**
 * Live updates over the WebSocket API, timed end to end (bench/run.sh LiveUpdates): {@link
 * io.fieldline.perf.live.LivePayload} puts Gatling's clock into each message of the watched devices
 * and notes its PUBACK, {@link io.fieldline.perf.live.LiveUpdateStats} matches every update a
 * subscriber receives to the message it carries.
 */
@NullMarked
package io.fieldline.perf.live;

import org.jspecify.annotations.NullMarked;
