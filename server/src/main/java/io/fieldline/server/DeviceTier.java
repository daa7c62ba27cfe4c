package io.fieldline.server;

import com.typesafe.config.Config;
import io.fieldline.actors.ActorsConfig;
import io.fieldline.actors.LocalDeviceInbox;
import io.fieldline.common.port.TelemetryStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The device tier: one Pekko actor system (for the device actors and Pekko HTTP) and this node's
 * device actors behind {@link LocalDeviceInbox}, writing through the storage tier's {@link
 * TelemetryStore}.
 *
 * @param system the actor system, shared with the HTTP tier
 * @param gateway this node's device actors
 * @param config the actors' settings (shutdown drain bound)
 */
record DeviceTier(ActorSystem<Void> system, LocalDeviceInbox gateway, ActorsConfig config) {

  static DeviceTier start(
      Config root,
      ActorsConfig config,
      TelemetryStore store,
      MeterRegistry metrics,
      StopSteps stops) {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "fieldline", root);
    stops.add(
        "actor system",
        () -> {
          system.terminate();
          StopSteps.await(system.getWhenTerminated(), Duration.ofSeconds(10), "actor system");
        });
    LocalDeviceInbox gateway = LocalDeviceInbox.create(system, config, store, metrics);
    DeviceTier tier = new DeviceTier(system, gateway, config);
    stops.add("device actors", tier::drain);
    return tier;
  }

  /** Lets the device actors finish their accepted writes (bounded by the shutdown timeout). */
  void drain() {
    StopSteps.await(gateway.shutdown(), config.shutdownTimeout().plusSeconds(5), "device actors");
  }
}
