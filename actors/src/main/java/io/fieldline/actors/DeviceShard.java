package io.fieldline.actors;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.port.TelemetryStore;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes messages to the {@link Device} actors of one slice of the devices (those whose {@code
 * floorMod(deviceId.hashCode(), shards)} is this shard's index), starting a device's actor on its
 * first message and forgetting it when it passivates or stops. All state is confined to the actor.
 *
 * <p>Messages for one device pass through one shard, so they reach the device in submission order.
 * A passivated device is removed from routing at once and told to {@link Device.Stop}; it finishes
 * what was routed to it before, while a newer message starts a fresh actor for the same device.
 */
final class DeviceShard extends AbstractBehavior<DeviceShard.Command> {

  private static final Logger LOG = LoggerFactory.getLogger(DeviceShard.class);

  /** What a shard accepts. */
  interface Command {}

  /** Delivers {@code command} to the actor of {@code deviceId}, starting it if needed. */
  record Route(DeviceId deviceId, Device.Command command) implements Command {}

  /** From an idle device: stop routing to it, then tell it to stop. */
  record Passivate(DeviceId deviceId, ActorRef<Device.Command> device) implements Command {}

  /**
   * Stops the actors of the devices {@code released} matches (this node no longer owns them): they
   * finish what was routed to them; a later message starts a fresh actor (which reads the stored
   * latest values only when asked for them). Called on the shard's thread: the predicate must be
   * cheap and thread-safe.
   */
  record Release(Predicate<DeviceId> released) implements Command {}

  /**
   * Stops routing (new messages are rejected as {@link Ack.Reason#UNAVAILABLE}), tells every device
   * to stop once its writes are done, and replies {@link Drained} when all have stopped; then the
   * shard stops itself.
   */
  record Drain(ActorRef<Drained> replyTo) implements Command {}

  /** Reply to {@link Drain}: every device actor of the shard has stopped. */
  record Drained(int shard) {}

  private record DeviceTerminated(DeviceId deviceId, ActorRef<Device.Command> device)
      implements Command {}

  /**
   * The shard's behavior. A shard that throws resumes with its routing table intact: restarting
   * would forget live children and route their devices to second actors.
   */
  static Behavior<Command> create(
      int index, TelemetryStore store, ActorsConfig config, ActorMetrics metrics) {
    return Behaviors.supervise(
            Behaviors.<Command>setup(ctx -> new DeviceShard(ctx, index, store, config, metrics)))
        .onFailure(SupervisorStrategy.resume());
  }

  private final int index;
  private final TelemetryStore store;
  private final ActorsConfig config;
  private final ActorMetrics metrics;
  private final Map<DeviceId, ActorRef<Device.Command>> devices = new HashMap<>();
  private int alive; // children not yet terminated, including passivating ones
  private long spawned;
  private @Nullable ActorRef<Drained> drainedReplyTo;

  private DeviceShard(
      ActorContext<Command> context,
      int index,
      TelemetryStore store,
      ActorsConfig config,
      ActorMetrics metrics) {
    super(context);
    this.index = index;
    this.store = store;
    this.config = config;
    this.metrics = metrics;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Route.class, this::onRoute)
        .onMessage(Passivate.class, this::onPassivate)
        .onMessage(Release.class, this::onRelease)
        .onMessage(DeviceTerminated.class, this::onDeviceTerminated)
        .onMessage(Drain.class, this::onDrain)
        .build();
  }

  private Behavior<Command> onRoute(Route route) {
    if (drainedReplyTo != null) {
      if (route.command() instanceof Device.RecordMessage record) {
        metrics.reject(record.ack(), Ack.Reason.UNAVAILABLE, "shutting down");
      }
      return this;
    }
    ActorRef<Device.Command> device = devices.get(route.deviceId());
    if (device == null) {
      device = start(route.deviceId());
    }
    device.tell(route.command());
    return this;
  }

  private ActorRef<Device.Command> start(DeviceId deviceId) {
    // A passivating actor of the same device may still be alive: names carry a sequence number.
    ActorRef<Device.Command> device =
        getContext()
            .spawn(
                Device.create(deviceId, store, config, metrics, getContext().getSelf()),
                "device-" + deviceId + "-" + spawned++);
    getContext().watchWith(device, new DeviceTerminated(deviceId, device));
    devices.put(deviceId, device);
    alive++;
    metrics.actorStarted();
    return device;
  }

  private Behavior<Command> onPassivate(Passivate passivate) {
    if (drainedReplyTo != null) {
      return this; // already told to stop by the drain
    }
    if (passivate.device().equals(devices.get(passivate.deviceId()))) {
      devices.remove(passivate.deviceId());
      metrics.passivated();
      LOG.debug("[shard|{}] passivating device {}", index, passivate.deviceId());
    }
    // Also answers a repeated request; messages routed before this still reach the device first.
    passivate.device().tell(Device.Stop.INSTANCE);
    return this;
  }

  private Behavior<Command> onRelease(Release release) {
    int before = devices.size();
    devices
        .entrySet()
        .removeIf(
            entry -> {
              if (!release.released().test(entry.getKey())) {
                return false;
              }
              entry.getValue().tell(Device.Stop.INSTANCE);
              return true;
            });
    if (devices.size() < before) {
      LOG.debug("[shard|{}] released {} device actors", index, before - devices.size());
    }
    return this;
  }

  private Behavior<Command> onDeviceTerminated(DeviceTerminated terminated) {
    devices.remove(terminated.deviceId(), terminated.device());
    alive--;
    metrics.actorStopped();
    return drainedIfDone();
  }

  private Behavior<Command> onDrain(Drain drain) {
    drainedReplyTo = drain.replyTo();
    LOG.debug("[shard|{}] draining {} device actors", index, alive);
    devices.values().forEach(device -> device.tell(Device.Stop.INSTANCE));
    devices.clear();
    return drainedIfDone();
  }

  private Behavior<Command> drainedIfDone() {
    if (drainedReplyTo != null && alive == 0) {
      drainedReplyTo.tell(new Drained(index));
      return Behaviors.stopped();
    }
    return this;
  }
}
