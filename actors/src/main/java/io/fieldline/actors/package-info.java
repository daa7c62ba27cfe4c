/**
 * Device actors: the local {@link io.fieldline.common.port.DeviceInbox}. {@link
 * io.fieldline.actors.LocalDeviceInbox} routes each device message through a {@code DeviceShard} to
 * the device's {@code Device} actor, which writes it through the {@link
 * io.fieldline.common.port.TelemetryStore} with bounded concurrency, keeps the device's latest
 * values and completes the acknowledgement when the write completed. Configuration: {@link
 * io.fieldline.actors.ActorsConfig}; meters: {@link io.fieldline.actors.ActorMetrics}. The actors
 * themselves are package-private; other modules use only the gateway.
 *
 * <p>This package knows nothing of Netty or Cassandra (enforced by an ArchUnit test).
 */
@NullMarked
package io.fieldline.actors;

import org.jspecify.annotations.NullMarked;
