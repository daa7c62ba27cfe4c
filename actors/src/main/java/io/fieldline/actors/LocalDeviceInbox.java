package io.fieldline.actors;

import com.typesafe.config.Config;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.port.TelemetryStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local {@link DeviceInbox}: hands each device message to its device actor and returns the
 * acknowledgement that actor completes when the write completed (flow steps 4–6).
 *
 * <p>Per message, {@link #submit} allocates one {@link CompletableFuture}, arms its timeout on a
 * shared timer and tells the device's {@link DeviceShard} (chosen by {@code
 * floorMod(deviceId.hashCode(), shards)}); there is no temporary actor per message as with {@code
 * AskPattern}. The future travels inside the message, so this works only inside one JVM.
 *
 * <p>Thread-safe; {@link #submit} never blocks and may be called from any thread, typically a Netty
 * event loop. The acknowledgement completes on an actor or timer thread: callers that touch their
 * own state hop back with {@code whenCompleteAsync(…, executor)}.
 */
public final class LocalDeviceInbox implements DeviceInbox, AutoCloseable {

  /** Name of the actor system the gateway creates when it owns one. */
  public static final String SYSTEM_NAME = "fieldline";

  private static final Logger LOG = LoggerFactory.getLogger(LocalDeviceInbox.class);
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final ActorSystem<?> system;
  private final boolean ownsSystem;
  private final ActorsConfig config;
  private final ActorMetrics metrics;
  private final AckDeadlines deadlines;
  private final List<ActorRef<DeviceShard.Command>> shards;
  private final AtomicReference<CompletableFuture<Void>> shutdown = new AtomicReference<>();
  private volatile boolean accepting = true;

  /**
   * Starts a gateway on its own actor system, named {@value #SYSTEM_NAME} and configured from
   * {@code root} (its {@code pekko} block); {@link #shutdown} terminates that system.
   *
   * @param root the resolved application configuration, with {@code fieldline.actors}
   * @throws IllegalArgumentException if {@code fieldline.actors} is invalid (all errors listed)
   */
  public static LocalDeviceInbox create(Config root, TelemetryStore store, MeterRegistry registry) {
    ActorsConfig config = ActorsConfig.from(root);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, root);
    return new LocalDeviceInbox(system, true, config, store, registry);
  }

  /**
   * Starts a gateway on an actor system owned by the caller; {@link #shutdown} drains and stops the
   * gateway's actors but leaves the system running.
   */
  public static LocalDeviceInbox create(
      ActorSystem<?> system, ActorsConfig config, TelemetryStore store, MeterRegistry registry) {
    return new LocalDeviceInbox(system, false, config, store, registry);
  }

  private LocalDeviceInbox(
      ActorSystem<?> system,
      boolean ownsSystem,
      ActorsConfig config,
      TelemetryStore store,
      MeterRegistry registry) {
    this.system = system;
    this.ownsSystem = ownsSystem;
    this.config = config;
    this.metrics = new ActorMetrics(registry);
    this.deadlines = new AckDeadlines(config.ackTimeout(), metrics);
    int instance = INSTANCES.incrementAndGet();
    List<ActorRef<DeviceShard.Command>> refs = new ArrayList<>(config.shards());
    for (int i = 0; i < config.shards(); i++) {
      refs.add(
          system.systemActorOf(
              DeviceShard.create(i, store, config, metrics),
              "fieldline-devices-" + instance + "-shard-" + i,
              Props.empty()));
    }
    this.shards = List.copyOf(refs);
    LOG.info("[actors] started {} device shards on actor system {}", shards.size(), system.name());
  }

  /**
   * Submits a message to its device actor. The stage completes with {@link Ack.Stored} once the
   * store confirmed the write, or with {@link Ack.Rejected}: {@code WRITE_FAILED} (the store
   * failed, detail = the {@code StoreException.Kind}; or {@code ack-timeout} passed, detail
   * "timeout"), {@code OVERLOADED} (the device's stash is full), {@code UNAVAILABLE} (shutting
   * down). An empty message is acknowledged at once without I/O. Never completes exceptionally.
   */
  @Override
  public CompletionStage<Ack> submit(DeviceMessage message) {
    if (!accepting) {
      return rejectedNow();
    }
    if (message.size() == 0) {
      return CompletableFuture.completedStage(Ack.stored());
    }
    CompletableFuture<Ack> ack = new CompletableFuture<>();
    if (!deadlines.arm(ack)) {
      return rejectedNow();
    }
    DeviceId deviceId = message.deviceId();
    shards
        .get(shardIndex(deviceId, shards.size()))
        .tell(new DeviceShard.Route(deviceId, new Device.RecordMessage(message, ack)));
    return ack;
  }

  /**
   * The latest time-series values of a device (key → newest value), as its actor knows them: read
   * from the store on the actor's first ask, merged with every write stored since it started.
   * Starts the device's actor if needed. Fails with a {@code TimeoutException} after {@code
   * ack-timeout} and with {@link IllegalStateException} once the gateway shuts down. Not on the
   * per-message path.
   */
  public CompletionStage<Map<String, TsKvEntry>> latestValues(DeviceId deviceId) {
    if (!accepting) {
      return CompletableFuture.failedStage(new IllegalStateException("gateway is shut down"));
    }
    return AskPattern.<DeviceShard.Command, Device.LatestReported>ask(
            shards.get(shardIndex(deviceId, shards.size())),
            replyTo -> new DeviceShard.Route(deviceId, new Device.GetLatest(replyTo)),
            config.ackTimeout(),
            system.scheduler())
        .thenApply(Device.LatestReported::values);
  }

  /**
   * Stops the actors of the devices {@code released} matches, typically those a cluster's ring no
   * longer gives to this node. Each finishes the messages it already has; a later message for the
   * device starts a fresh actor. Never blocks; the predicate runs on the shards' threads and must
   * be cheap and thread-safe.
   */
  public void release(Predicate<DeviceId> released) {
    if (accepting) {
      for (ActorRef<DeviceShard.Command> shard : shards) {
        shard.tell(new DeviceShard.Release(released));
      }
    }
  }

  /**
   * Shuts down gracefully, once (later calls return the same stage): rejects new messages as {@code
   * UNAVAILABLE}, lets every device actor finish its in-flight and waiting writes (bounded by
   * {@code shutdown-timeout}), stops the actors, terminates the actor system if the gateway created
   * it, and rejects any acknowledgement still pending. Never blocks.
   *
   * @return completes when all of that is done
   */
  public CompletionStage<Void> shutdown() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    CompletableFuture<Void> first = shutdown.compareAndExchange(null, done);
    if (first != null) {
      return first;
    }
    accepting = false;
    LOG.info("[actors] shutting down, {} writes in flight", metrics.inflightWrites());
    CompletableFuture<?>[] drains =
        shards.stream()
            .map(
                shard ->
                    AskPattern.<DeviceShard.Command, DeviceShard.Drained>ask(
                            shard,
                            DeviceShard.Drain::new,
                            config.shutdownTimeout(),
                            system.scheduler())
                        .toCompletableFuture())
            .toArray(CompletableFuture<?>[]::new);
    CompletableFuture.allOf(drains)
        .handle(
            (ok, failure) -> {
              if (failure != null) {
                LOG.warn(
                    "[actors] drain not finished within {}, {} writes still in flight",
                    config.shutdownTimeout(),
                    metrics.inflightWrites());
              }
              return null;
            })
        .thenCompose(
            ignored -> ownsSystem ? terminateSystem() : CompletableFuture.completedStage(null))
        .whenComplete(
            (ok, failure) -> {
              deadlines.close();
              metrics.unregister();
              LOG.info("[actors] shut down");
              if (failure != null) {
                done.completeExceptionally(failure);
              } else {
                done.complete(null);
              }
            });
    return done;
  }

  private CompletionStage<Void> terminateSystem() {
    system.terminate();
    return system.getWhenTerminated().thenApply(terminated -> null);
  }

  /**
   * Shuts down and waits for it, at most {@code shutdown-timeout} plus 10 seconds. Blocks: for the
   * composition root's shutdown path only; from an actor or callback thread use {@link #shutdown}.
   *
   * @throws IllegalStateException if called from a thread of the gateway's actor system
   */
  @Override
  public void close() {
    if (Thread.currentThread().getName().startsWith(system.name() + "-")) {
      throw new IllegalStateException("close() blocks; use shutdown() on actor system threads");
    }
    try {
      shutdown()
          .toCompletableFuture()
          .get(config.shutdownTimeout().plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("[actors] shutdown did not complete cleanly: {}", e.toString());
    }
  }

  /** The actor system the gateway runs on (its own, or the one it was given). */
  public ActorSystem<?> system() {
    return system;
  }

  private CompletionStage<Ack> rejectedNow() {
    CompletableFuture<Ack> ack = new CompletableFuture<>();
    metrics.reject(ack, Ack.Reason.UNAVAILABLE, "shutting down");
    return ack;
  }

  /** The shard of a device: never negative, also for negative hash codes. */
  static int shardIndex(DeviceId deviceId, int shards) {
    return Math.floorMod(deviceId.hashCode(), shards);
  }
}
