package io.fieldline.actors;

import io.fieldline.common.Ack;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceMessage;
import io.fieldline.common.StoreException;
import io.fieldline.common.TelemetryStore;
import io.fieldline.common.TsKvEntry;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.PreRestart;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One device's actor (flow step 5): writes the device's messages through the {@link
 * TelemetryStore}, completes each message's acknowledgement when its write completed, and keeps the
 * device's latest time-series values. Child of a {@link DeviceShard}; all state is confined to the
 * actor and touched only while it processes a message (store completions come back through {@code
 * pipeToSelf}).
 *
 * <p>Lifecycle: on start it restores the latest values from the store, stashing messages meanwhile
 * (a failed or slow restore is logged and the actor goes on with what it has). Then at most {@code
 * max-inflight-writes} writes run at once; later messages wait, up to {@code stash-capacity}, and
 * beyond that are rejected as {@link Ack.Reason#OVERLOADED}. When idle for {@code passivate-after}
 * it asks its shard to passivate it and stops once the shard's {@link Stop} arrived and nothing is
 * in flight or waiting. Every acknowledgement it receives is completed exactly once, including when
 * the actor restarts or stops.
 */
final class Device extends AbstractBehavior<Device.Command> {

  private static final Logger LOG = LoggerFactory.getLogger(Device.class);

  /** What a device actor accepts. */
  interface Command {}

  /**
   * Stores {@code message} and completes {@code ack} with the outcome. Local-only: the future is
   * completed in this JVM, so this message never crosses the network (a remote owner is reached
   * through the cluster's own protocol).
   */
  record RecordMessage(DeviceMessage message, CompletableFuture<Ack> ack) implements Command {}

  /** Asks for the latest time-series values this actor knows: restored plus written since. */
  record GetLatest(ActorRef<LatestReported> replyTo) implements Command {}

  /** Reply to {@link GetLatest}: key → its newest value. */
  record LatestReported(Map<String, TsKvEntry> values) {}

  /** From the shard: nothing more will be routed here; stop once in-flight work is done. */
  enum Stop implements Command {
    INSTANCE
  }

  private record LatestRestored(@Nullable List<TsKvEntry> values, @Nullable Throwable failure)
      implements Command {}

  private enum RestoreTimedOut implements Command {
    INSTANCE
  }

  private record WriteCompleted(RecordMessage command, @Nullable Throwable failure)
      implements Command {}

  private enum Idle implements Command {
    INSTANCE
  }

  /**
   * The device's behavior, restarted (state restored from the store again) if it ever throws.
   *
   * @param shard the parent, asked for passivation when the device is idle
   */
  static Behavior<Command> create(
      DeviceId deviceId,
      TelemetryStore store,
      ActorsConfig config,
      ActorMetrics metrics,
      ActorRef<DeviceShard.Command> shard) {
    // Timers and stash are created anew on restart; timers of the failed instance are cancelled.
    Behavior<Command> device =
        Behaviors.setup(
            ctx ->
                Behaviors.withTimers(
                    timers ->
                        Behaviors.withStash(
                            config.stashCapacity(),
                            stash ->
                                new Device(
                                    ctx, timers, stash, deviceId, store, config, metrics, shard))));
    return Behaviors.supervise(device).onFailure(SupervisorStrategy.restart());
  }

  private final StashBuffer<Command> restoreStash;
  private final DeviceId deviceId;
  private final TelemetryStore store;
  private final ActorsConfig config;
  private final ActorMetrics metrics;
  private final ActorRef<DeviceShard.Command> shard;
  private final LatestValues latest = new LatestValues();
  private final WriteBacklog backlog;
  private final Receive<Command> active;
  private boolean stopping;
  private boolean passivationRequested;

  private Device(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      StashBuffer<Command> restoreStash,
      DeviceId deviceId,
      TelemetryStore store,
      ActorsConfig config,
      ActorMetrics metrics,
      ActorRef<DeviceShard.Command> shard) {
    super(context);
    this.restoreStash = restoreStash;
    this.deviceId = deviceId;
    this.store = store;
    this.config = config;
    this.metrics = metrics;
    this.shard = shard;
    this.backlog = new WriteBacklog(config.maxInflightWrites(), config.stashCapacity());
    this.active = activeBehavior();
    context.setReceiveTimeout(config.passivateAfter(), Idle.INSTANCE);
    context.pipeToSelf(guarded(() -> store.readLatest(deviceId)), LatestRestored::new);
    // A read that never answers must not hold the device's messages hostage.
    timers.startSingleTimer(RestoreTimedOut.INSTANCE, config.ackTimeout());
    LOG.debug("[device|{}] started, restoring latest values", deviceId);
  }

  /** The initial behavior: waiting for the latest values, stashing everything else. */
  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(LatestRestored.class, this::onRestored)
        .onMessageEquals(RestoreTimedOut.INSTANCE, this::onRestoreTimedOut)
        .onMessage(WriteCompleted.class, this::onWriteCompleted)
        .onMessageEquals(Stop.INSTANCE, () -> onStopWhileRestoring())
        .onMessageEquals(Idle.INSTANCE, Behaviors::same)
        .onMessage(Command.class, this::stashWhileRestoring)
        .onSignal(PreRestart.class, signal -> onPreRestart())
        .onSignal(PostStop.class, signal -> onPostStop())
        .build();
  }

  private Receive<Command> activeBehavior() {
    return newReceiveBuilder()
        .onMessage(RecordMessage.class, this::onRecord)
        .onMessage(WriteCompleted.class, this::onWriteCompleted)
        .onMessage(GetLatest.class, this::onGetLatest)
        .onMessageEquals(Stop.INSTANCE, this::onStop)
        .onMessageEquals(Idle.INSTANCE, this::onIdle)
        .onMessage(LatestRestored.class, this::onLateRestore)
        .onMessageEquals(RestoreTimedOut.INSTANCE, Behaviors::same)
        .onSignal(PreRestart.class, signal -> onPreRestart())
        .onSignal(PostStop.class, signal -> onPostStop())
        .build();
  }

  private Behavior<Command> stashWhileRestoring(Command command) {
    if (restoreStash.isFull()) {
      rejectIfRecord(command, Ack.Reason.OVERLOADED, "device stash full while restoring");
    } else {
      restoreStash.stash(command);
    }
    return Behaviors.same();
  }

  private Behavior<Command> onStopWhileRestoring() {
    stopping = true;
    return Behaviors.same();
  }

  private Behavior<Command> onRestored(LatestRestored restored) {
    if (restored.failure() != null) {
      // Writes matter more than the latest-value cache: go on with what later writes bring.
      LOG.warn(
          "[device|{}] restoring latest values failed, continuing without them: {}",
          deviceId,
          restored.failure().toString());
    } else if (restored.values() != null) {
      latest.advance(restored.values());
    }
    return becomeActive();
  }

  private Behavior<Command> onRestoreTimedOut() {
    LOG.warn(
        "[device|{}] restoring latest values took over {}, continuing without them",
        deviceId,
        config.ackTimeout());
    return becomeActive();
  }

  private Behavior<Command> becomeActive() {
    Behavior<Command> next = restoreStash.unstashAll(active);
    return stopping && backlog.isEmpty() ? Behaviors.stopped() : next;
  }

  private Behavior<Command> onLateRestore(LatestRestored restored) {
    if (restored.values() != null) {
      latest.advance(restored.values()); // newer values written meanwhile still win
    }
    return Behaviors.same();
  }

  private Behavior<Command> onRecord(RecordMessage command) {
    CompletableFuture<Ack> ack = command.ack();
    if (ack.isDone()) {
      // Timed out while queued: the device gets no PUBACK and resends; writing now is waste.
      LOG.trace("[device|{}] skipping a message whose acknowledgement already completed", deviceId);
    } else if (command.message().size() == 0) {
      metrics.complete(ack, Ack.stored());
    } else if (backlog.canStart()) {
      startWrite(command);
    } else if (backlog.offer(command)) {
      LOG.trace("[device|{}] {} writes in flight, message waits", deviceId, backlog.inFlight());
    } else {
      metrics.reject(ack, Ack.Reason.OVERLOADED, "device stash full");
    }
    return Behaviors.same();
  }

  private void startWrite(RecordMessage command) {
    DeviceMessage message = command.message();
    LOG.trace("[device|{}] writing {} values", deviceId, message.size());
    backlog.started(command.ack());
    metrics.writeStarted();
    getContext()
        .pipeToSelf(
            guarded(() -> write(message)), (ok, failure) -> new WriteCompleted(command, failure));
  }

  private CompletionStage<Void> write(DeviceMessage message) {
    if (message instanceof DeviceMessage.PostTelemetry telemetry) {
      return store.writeTelemetry(deviceId, telemetry.entries());
    }
    DeviceMessage.PostAttributes attributes = (DeviceMessage.PostAttributes) message;
    return store.writeAttributes(
        deviceId, AttributeScope.CLIENT_SCOPE, attributes.entries(), attributes.receivedAt());
  }

  private Behavior<Command> onWriteCompleted(WriteCompleted completed) {
    metrics.writeFinished();
    RecordMessage command = completed.command();
    backlog.finished(command.ack());
    Throwable failure = completed.failure();
    if (failure == null) {
      if (command.message() instanceof DeviceMessage.PostTelemetry telemetry) {
        latest.advance(telemetry.entries());
      }
      LOG.trace("[device|{}] write stored", deviceId);
      metrics.complete(command.ack(), Ack.stored());
    } else {
      String kind = kindOf(failure);
      LOG.debug("[device|{}] write failed ({}): {}", deviceId, kind, failure.toString());
      metrics.reject(command.ack(), Ack.Reason.WRITE_FAILED, kind);
    }
    for (RecordMessage next = backlog.next(); next != null; next = backlog.next()) {
      startWrite(next);
    }
    return maybeStop();
  }

  private Behavior<Command> onGetLatest(GetLatest query) {
    query.replyTo().tell(new LatestReported(latest.snapshot()));
    return Behaviors.same();
  }

  private Behavior<Command> onIdle() {
    if (!passivationRequested && !stopping && backlog.isEmpty()) {
      LOG.debug("[device|{}] idle for {}, asking to passivate", deviceId, config.passivateAfter());
      passivationRequested = true;
      getContext().cancelReceiveTimeout();
      shard.tell(new DeviceShard.Passivate(deviceId, getContext().getSelf()));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onStop() {
    stopping = true;
    getContext().cancelReceiveTimeout();
    return maybeStop();
  }

  private Behavior<Command> maybeStop() {
    return stopping && backlog.isEmpty() ? Behaviors.stopped() : Behaviors.same();
  }

  private Behavior<Command> onPreRestart() {
    // In-flight writes complete into the next incarnation (same mailbox); waiting ones would be
    // lost with this instance's queues, so they are answered now.
    LOG.warn("[device|{}] restarting after a failure", deviceId);
    failQueued(Ack.Reason.WRITE_FAILED, "device actor restarted");
    return Behaviors.same();
  }

  private Behavior<Command> onPostStop() {
    failQueued(Ack.Reason.UNAVAILABLE, "device actor stopped");
    // Only when the actor system terminates before the drain finished: the write may still
    // succeed, but rejecting a stored message only causes a harmless resend.
    backlog
        .clearInFlight()
        .forEach(ack -> metrics.reject(ack, Ack.Reason.UNAVAILABLE, "device actor stopped"));
    return Behaviors.same();
  }

  private void failQueued(Ack.Reason reason, String detail) {
    backlog.clearWaiting().forEach(ack -> metrics.reject(ack, reason, detail));
    restoreStash.forEach(command -> rejectIfRecord(command, reason, detail));
    restoreStash.clear();
  }

  private void rejectIfRecord(Command command, Ack.Reason reason, String detail) {
    if (command instanceof RecordMessage record) {
      metrics.reject(record.ack(), reason, detail);
    }
    // A GetLatest without an answer times out at the asker.
  }

  private static String kindOf(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause instanceof StoreException store
        ? store.kind().name()
        : StoreException.Kind.FAILED.name();
  }

  // A store that throws or returns null instead of failing its stage must not crash the actor.
  private static <T> CompletionStage<T> guarded(Supplier<CompletionStage<T>> call) {
    try {
      return Objects.requireNonNull(call.get(), "the store returned a null stage");
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
