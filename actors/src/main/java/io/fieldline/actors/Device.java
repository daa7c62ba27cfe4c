package io.fieldline.actors;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import java.time.Duration;
import java.util.ArrayList;
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
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.japi.function.Function;
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
 * <p>Lifecycle: a new actor writes its first message at once. The latest values it knows are those
 * written since it started; the store's are read only when someone asks ({@link GetLatest}), once,
 * and merged (newer values win), so a connect storm of new actors costs no reads. At most {@code
 * max-inflight-writes} writes run at once; later messages wait, up to {@code stash-capacity}, and
 * beyond that are rejected as {@link Ack.Reason#OVERLOADED}. When idle for at least {@code
 * passivate-after} (see below) it asks its shard to passivate it and stops once the shard's {@link
 * Stop} arrived and nothing is in flight or waiting. Every acknowledgement it receives is completed
 * exactly once, including when the actor restarts or stops.
 *
 * <p>Idleness is checked coarsely, at no cost per message: every message the actor handles except
 * its own {@code IdleCheck} counts as activity (the messages that reset a Pekko receive timeout;
 * the actor used one before, but Pekko reschedules that timer on every message received) and only
 * sets a flag. One fixed-delay timer sends {@code IdleCheck} every {@code passivate-after / 2}; a
 * check that finds no activity since the previous check, when that previous check found none
 * either, passivates. So a device passivates after between {@code passivate-after} and 1.5 × {@code
 * passivate-after} of idleness (timer and mailbox delays aside), and one that receives a message
 * more often than every {@code passivate-after} never does.
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

  /**
   * Asks for the device's latest time-series values: those stored before this actor started (read
   * on the first ask) merged with those written since.
   */
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

  /** From the actor's periodic timer (also the timer's key); not activity itself. */
  private enum IdleCheck implements Command {
    INSTANCE
  }

  // The idle check timer's smallest period, for a passivate-after of a few nanoseconds (tests).
  private static final Duration MIN_IDLE_CHECK_PERIOD = Duration.ofMillis(1);

  /**
   * The device's behavior, restarted (with empty latest values, read again on the next ask) if it
   * ever throws.
   *
   * @param shard the parent, asked for passivation when the device is idle
   */
  static Behavior<Command> create(
      DeviceId deviceId,
      TelemetryStore store,
      ActorsConfig config,
      ActorMetrics metrics,
      ActorRef<DeviceShard.Command> shard) {
    // Timers are created anew on restart; timers of the failed instance are cancelled.
    Behavior<Command> device =
        Behaviors.setup(
            ctx ->
                Behaviors.withTimers(
                    timers -> new Device(ctx, timers, deviceId, store, config, metrics, shard)));
    return Behaviors.supervise(device).onFailure(SupervisorStrategy.restart());
  }

  private final TimerScheduler<Command> timers;
  private final DeviceId deviceId;
  private final TelemetryStore store;
  private final ActorsConfig config;
  private final ActorMetrics metrics;
  private final ActorRef<DeviceShard.Command> shard;
  private final LatestValues latest = new LatestValues();
  private final WriteBacklog backlog;
  // Askers of GetLatest waiting for the store's values (at most stash-capacity).
  private final List<ActorRef<LatestReported>> awaitingLatest = new ArrayList<>();
  private Restore restore = Restore.NOT_STARTED;
  // The running read took longer than its timer: askers are answered at once until it completes.
  private boolean readOverdue;
  private boolean stopping;
  private boolean passivationRequested;
  // A message other than IdleCheck was handled since the last idle check.
  private boolean activeSinceCheck;
  // The last idle check found no activity since the one before it.
  private boolean idleAtLastCheck;

  private Device(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      DeviceId deviceId,
      TelemetryStore store,
      ActorsConfig config,
      ActorMetrics metrics,
      ActorRef<DeviceShard.Command> shard) {
    super(context);
    this.timers = timers;
    this.deviceId = deviceId;
    this.store = store;
    this.config = config;
    this.metrics = metrics;
    this.shard = shard;
    this.backlog = new WriteBacklog(config.maxInflightWrites(), config.stashCapacity());
    timers.startTimerWithFixedDelay(IdleCheck.INSTANCE, idleCheckPeriod(config));
    LOG.debug("[device|{}] started", deviceId);
  }

  private static Duration idleCheckPeriod(ActorsConfig config) {
    Duration half = config.passivateAfter().dividedBy(2);
    return half.compareTo(MIN_IDLE_CHECK_PERIOD) < 0 ? MIN_IDLE_CHECK_PERIOD : half;
  }

  /** Where the read of the store's latest values stands. */
  private enum Restore {
    NOT_STARTED,
    RUNNING,
    DONE
  }

  @Override
  public Receive<Command> createReceive() {
    // Every message but IdleCheck is activity: wrap each new handler in active(...).
    return newReceiveBuilder()
        .onMessage(RecordMessage.class, active(this::onRecord))
        .onMessage(WriteCompleted.class, active(this::onWriteCompleted))
        .onMessage(GetLatest.class, active(this::onGetLatest))
        .onMessage(Stop.class, active(stop -> onStop()))
        .onMessage(IdleCheck.class, check -> onIdleCheck())
        .onMessage(LatestRestored.class, active(this::onRestored))
        .onMessage(RestoreTimedOut.class, active(timedOut -> onRestoreTimedOut()))
        .onSignal(PreRestart.class, signal -> onPreRestart())
        .onSignal(PostStop.class, signal -> onPostStop())
        .build();
  }

  // Created once per behavior instance: no allocation per message, only a field write.
  private <M extends Command> Function<M, Behavior<Command>> active(
      Function<M, Behavior<Command>> handler) {
    return message -> {
      activeSinceCheck = true;
      return handler.apply(message);
    };
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
    if (restore == Restore.DONE || readOverdue || awaitingLatest.size() >= config.stashCapacity()) {
      query.replyTo().tell(new LatestReported(latest.snapshot()));
      return Behaviors.same();
    }
    awaitingLatest.add(query.replyTo());
    if (restore == Restore.NOT_STARTED) {
      restore = Restore.RUNNING;
      getContext().pipeToSelf(guarded(() -> store.readLatest(deviceId)), LatestRestored::new);
      // A read that never answers must not leave the askers waiting: they are answered with what
      // this actor knows well before their own ask (ack-timeout) gives up.
      timers.startSingleTimer(RestoreTimedOut.INSTANCE, config.ackTimeout().dividedBy(2));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onRestored(LatestRestored restored) {
    timers.cancel(RestoreTimedOut.INSTANCE);
    readOverdue = false;
    if (restored.failure() != null) {
      // Answer with what this actor knows; the next ask reads the store again.
      LOG.warn(
          "[device|{}] reading latest values failed, answering with those written since start: {}",
          deviceId,
          restored.failure().toString());
      restore = Restore.NOT_STARTED;
    } else {
      if (restored.values() != null) {
        latest.mergeStored(restored.values()); // values written meanwhile win unless older
      }
      restore = Restore.DONE;
    }
    answerAwaitingLatest();
    return maybeStop();
  }

  private Behavior<Command> onRestoreTimedOut() {
    LOG.warn(
        "[device|{}] reading latest values took over {}, answering with those written since start",
        deviceId,
        config.ackTimeout().dividedBy(2));
    readOverdue = true;
    answerAwaitingLatest(); // the read goes on; its values are merged when it completes
    return Behaviors.same();
  }

  private void answerAwaitingLatest() {
    LatestReported report = new LatestReported(latest.snapshot());
    awaitingLatest.forEach(asker -> asker.tell(report));
    awaitingLatest.clear();
  }

  private Behavior<Command> onIdleCheck() {
    if (activeSinceCheck || !idleAtLastCheck) {
      // Active in the last period, or idle for only one period (at least passivate-after / 2).
      idleAtLastCheck = !activeSinceCheck;
      activeSinceCheck = false;
      return Behaviors.same();
    }
    // No activity for two whole periods: idle for at least passivate-after.
    if (!passivationRequested && !stopping && backlog.isEmpty()) {
      LOG.debug(
          "[device|{}] idle for at least {}, asking to passivate",
          deviceId,
          config.passivateAfter());
      passivationRequested = true;
      timers.cancel(IdleCheck.INSTANCE);
      shard.tell(new DeviceShard.Passivate(deviceId, getContext().getSelf()));
    }
    return Behaviors.same();
  }

  private Behavior<Command> onStop() {
    stopping = true;
    timers.cancel(IdleCheck.INSTANCE);
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
    answerAwaitingLatest();
    return Behaviors.same();
  }

  private Behavior<Command> onPostStop() {
    failQueued(Ack.Reason.UNAVAILABLE, "device actor stopped");
    answerAwaitingLatest();
    // Only when the actor system terminates before the drain finished: the write may still
    // succeed, but rejecting a stored message only causes a harmless resend.
    backlog
        .clearInFlight()
        .forEach(ack -> metrics.reject(ack, Ack.Reason.UNAVAILABLE, "device actor stopped"));
    return Behaviors.same();
  }

  private void failQueued(Ack.Reason reason, String detail) {
    backlog.clearWaiting().forEach(ack -> metrics.reject(ack, reason, detail));
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
