package io.fieldline.fleet.rpc;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.query.PageData;
import io.fieldline.common.rpc.PersistentRpcStore;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.StoredRpc;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Server-side RPC on this node: the REST API's calls to devices.
 *
 * <ul>
 *   <li><b>Lightweight</b> ({@link #call}): held in memory while the REST call waits ({@link
 *       LightweightCall}): offered to the device's sessions on every node through {@link
 *       DeviceEvents}, offered again whenever a session of the device subscribes to RPC, and
 *       answered at the latest at the request's {@code expirationTime}. Bounded per node and per
 *       device ({@link RpcConfig}).
 *   <li><b>Persistent</b> ({@link #submit}): stored {@code QUEUED} first, then offered like a
 *       lightweight call; what the session reports moves its stored status ({@link
 *       PersistentDelivery}). Nothing of it waits in memory unless a session has it: when a session
 *       of the device subscribes to RPC, the device's <em>owner</em> node ({@code owns}) reads the
 *       device's pending requests from storage and offers them, so a request survives the restart
 *       of the node that took it and reaches a device that reconnects to any node.
 * </ul>
 *
 * A persistent request is delivered at least once: a session that subscribes while the request is
 * first offered may receive it twice. Thread-safe.
 */
public final class RpcService implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RpcService.class);
  private static final Set<RpcStatus> QUEUED = EnumSet.of(RpcStatus.QUEUED);

  private final DeviceEvents events;
  private final PersistentRpcStore store;
  private final Predicate<DeviceId> owns;
  private final RpcConfig config;
  private final LongSupplier clock;
  private final ScheduledThreadPoolExecutor timer;
  private final DeviceEvents.Subscription subscription;
  private final ConcurrentHashMap<DeviceId, Set<LightweightCall>> waiting =
      new ConcurrentHashMap<>();
  private final ConcurrentHashMap<UUID, PersistentDelivery> inFlight = new ConcurrentHashMap<>();
  private final AtomicInteger pending = new AtomicInteger();
  private volatile boolean closed;
  private final MeterRegistry metrics;
  private final Counter rejected;
  private final Counter persistentRefused;
  // Persistent requests of a device being submitted on this node (counted, not yet stored).
  private final ConcurrentHashMap<DeviceId, Integer> submitting = new ConcurrentHashMap<>();

  /**
   * @param events where requests are offered (this node's sessions and, in a cluster, every other
   *     node's)
   * @param local this node's listeners, where this service hears devices subscribe to RPC
   * @param store persistent requests
   * @param owns whether this node is the device's owner (always, on a single node)
   */
  public RpcService(
      DeviceEvents events,
      LocalDeviceEvents local,
      PersistentRpcStore store,
      Predicate<DeviceId> owns,
      RpcConfig config,
      MeterRegistry metrics) {
    this.events = events;
    this.store = store;
    this.owns = owns;
    this.config = config;
    this.clock = System::currentTimeMillis;
    this.metrics = metrics;
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread thread = new Thread(runnable, "fieldline-rpc-timer");
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
    this.rejected = Counter.builder("fieldline.rpc.rejected").register(metrics);
    this.persistentRefused =
        Counter.builder("fieldline.rpc.persistent.refused")
            .description(
                "persistent requests refused: the device has max-persistent-per-device open")
            .register(metrics);
    Gauge.builder("fieldline.rpc.pending", pending, AtomicInteger::get)
        .description("lightweight server-side RPC calls waiting on this node")
        .register(metrics);
    Gauge.builder("fieldline.rpc.persistent.in.flight", inFlight, ConcurrentHashMap::size)
        .description("persistent requests a session has from this node")
        .register(metrics);
    this.subscription = local.subscribeAll(this::onEvent);
  }

  /** The settings (defaults and bounds the REST API applies). */
  public RpcConfig config() {
    return config;
  }

  /** Epoch milliseconds, as this service counts them. */
  public long now() {
    return clock.getAsLong();
  }

  /**
   * Runs a lightweight request until it ends ({@link RpcOutcome}); fails at once with {@link
   * RpcRejectedException} when too many calls wait on this node or for this device.
   */
  public CompletionStage<RpcOutcome> call(ToDeviceRpc rpc) {
    if (rpc.persistent()) {
      throw new IllegalArgumentException("a persistent request is submitted, not called");
    }
    if (closed) {
      return CompletableFuture.completedFuture(new RpcOutcome.Stopped());
    }
    if (pending.incrementAndGet() > config.maxPending()) {
      pending.decrementAndGet();
      rejected.increment();
      return CompletableFuture.failedFuture(
          new RpcRejectedException(
              "too many server-side RPC calls waiting on this node (" + config.maxPending() + ")"));
    }
    LightweightCall call = new LightweightCall(rpc, events);
    boolean[] admitted = {false};
    waiting.compute(
        rpc.deviceId(),
        (device, calls) -> {
          Set<LightweightCall> kept = calls == null ? ConcurrentHashMap.newKeySet() : calls;
          if (kept.size() < config.maxPendingPerDevice()) {
            kept.add(call);
            admitted[0] = true;
          }
          return kept.isEmpty() ? null : kept;
        });
    if (!admitted[0]) {
      pending.decrementAndGet();
      rejected.increment();
      return CompletableFuture.failedFuture(
          new RpcRejectedException(
              "too many server-side RPC calls waiting for this device ("
                  + config.maxPendingPerDevice()
                  + ")"));
    }
    call.outcome().whenComplete((outcome, error) -> forget(call, outcome));
    long wait = Math.max(0, rpc.expirationTime() - now());
    try {
      call.deadline(
          timer.schedule(
              () -> call.finish(new RpcOutcome.TimedOut()), wait, TimeUnit.MILLISECONDS));
    } catch (RejectedExecutionException stopping) {
      call.finish(new RpcOutcome.Stopped());
      return call.outcome();
    }
    call.offer();
    return call.outcome();
  }

  private void forget(LightweightCall call, @Nullable RpcOutcome outcome) {
    waiting.computeIfPresent(
        call.rpc().deviceId(),
        (device, calls) -> {
          calls.remove(call);
          return calls.isEmpty() ? null : calls;
        });
    pending.decrementAndGet();
    String result =
        outcome == null
            ? "failed"
            : outcome.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
    metrics.counter("fieldline.rpc.calls", "kind", "lightweight", "outcome", result).increment();
  }

  /**
   * Stores a persistent request ({@code QUEUED}) and offers it to the device's sessions; completes
   * once it is stored. Fails with {@link RpcRejectedException}, storing nothing, when the device
   * already has {@code max-persistent-per-device} requests open ({@link
   * PersistentRpcStore#countOpen}) or being submitted on this node. Requests submitted at the same
   * moment on different nodes may pass the bound by as many.
   */
  public CompletionStage<UUID> submit(ToDeviceRpc rpc) {
    if (!rpc.persistent()) {
      throw new IllegalArgumentException("a lightweight request is called, not submitted");
    }
    DeviceId device = rpc.deviceId();
    int max = config.maxPersistentPerDevice();
    // This node's submits of the device not yet stored count too: a burst of parallel REST calls
    // cannot all read the same count and all pass.
    int before = submitting.merge(device, 1, Integer::sum) - 1;
    CompletionStage<UUID> submitted =
        store
            .countOpen(device, now())
            .thenCompose(
                open -> {
                  if (open + before >= max) {
                    persistentRefused.increment();
                    throw new RpcRejectedException(
                        "this device already has "
                            + max
                            + " persistent RPC requests queued or awaiting an answer"
                            + " (max-persistent-per-device); wait for them to end or delete some");
                  }
                  return store(rpc);
                });
    submitted.whenComplete(
        (id, error) -> submitting.computeIfPresent(device, (d, n) -> n <= 1 ? null : n - 1));
    return submitted;
  }

  private CompletionStage<UUID> store(ToDeviceRpc rpc) {
    return store
        .save(new StoredRpc(rpc, now(), RpcStatus.QUEUED, null))
        .thenApply(
            stored -> {
              metrics
                  .counter("fieldline.rpc.calls", "kind", "persistent", "outcome", "queued")
                  .increment();
              offerPersistent(rpc);
              return rpc.id();
            });
  }

  /**
   * A stored request, its status brought up to date first: one still queued past its expiration
   * time is {@code EXPIRED}, one sent and not answered by its expiration time plus its timeout (its
   * node stopped before it could say so) is {@code TIMEOUT}.
   */
  public CompletionStage<Optional<StoredRpc>> find(UUID id) {
    return store.find(id).thenCompose(found -> found.isEmpty() ? done(found) : settle(found.get()));
  }

  /** One page of a device's stored requests, newest first. */
  public CompletionStage<PageData<StoredRpc>> list(
      DeviceId device, Optional<RpcStatus> status, int pageSize, int page) {
    return store.list(device, status, pageSize, page);
  }

  /** Deletes a stored request; completes with false when there was none. */
  public CompletionStage<Boolean> delete(UUID id) {
    return store.delete(id);
  }

  private CompletionStage<Optional<StoredRpc>> settle(StoredRpc rpc) {
    long now = now();
    ToDeviceRpc request = rpc.request();
    RpcStatus late = null;
    if (rpc.status() == RpcStatus.QUEUED && request.expirationTime() <= now) {
      late = RpcStatus.EXPIRED;
    } else if ((rpc.status() == RpcStatus.SENT || rpc.status() == RpcStatus.DELIVERED)
        && request.expirationTime() + request.timeoutMillis() <= now
        && !inFlight.containsKey(request.id())) {
      late = RpcStatus.TIMEOUT;
    }
    if (late == null) {
      return done(Optional.of(rpc));
    }
    RpcStatus to = late;
    return store
        .transition(request.deviceId(), request.id(), EnumSet.of(rpc.status()), to, null, null)
        .thenCompose(
            moved ->
                moved
                    ? done(Optional.of(new StoredRpc(request, rpc.createdTime(), to, null)))
                    : store.find(request.id()));
  }

  private static <T> CompletionStage<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  private void offerPersistent(ToDeviceRpc rpc) {
    offerPersistent(rpc, LightweightCall.IMMEDIATE_REOFFERS);
  }

  private void offerPersistent(ToDeviceRpc rpc, int reoffers) {
    if (closed) {
      return;
    }
    PersistentDelivery delivery = new PersistentDelivery(rpc, reoffers, store, timer, this::ended);
    if (inFlight.putIfAbsent(rpc.id(), delivery) == null) {
      delivery.offer(events);
    }
  }

  private void ended(PersistentDelivery delivery, @Nullable ToDeviceRpc retry) {
    inFlight.remove(delivery.rpc().id(), delivery);
    if (retry == delivery.rpc()) {
      offerPersistent(retry, delivery.reoffers() - 1);
    } else if (retry != null) {
      offerPersistent(retry);
    }
  }

  // Called for every device event on this node: only subscriptions matter here.
  private boolean onEvent(DeviceEvent event) {
    if (event instanceof DeviceEvent.RpcSubscribed subscribed) {
      DeviceId device = subscribed.deviceId();
      Set<LightweightCall> calls = waiting.get(device);
      if (calls != null) {
        calls.forEach(LightweightCall::offer);
      }
      if (owns.test(device)) {
        offerStored(device);
      }
    }
    return false;
  }

  private void offerStored(DeviceId device) {
    // Bounded: a device has at most max-persistent-per-device requests open, and however many
    // were stored before the bound, one subscription reads no more than that.
    store
        .pending(device, config.maxPersistentPerDevice())
        .whenComplete(
            (stored, error) -> {
              if (error != null) {
                LOG.warn("[rpc] pending requests of {} could not be read", device, error);
                return;
              }
              long now = now();
              for (StoredRpc rpc : stored) {
                ToDeviceRpc request = rpc.request();
                if (request.expirationTime() <= now) {
                  // A request sent just before its expiration may still be answered: only one
                  // that never left is over (find() settles the others).
                  if (rpc.status() == RpcStatus.QUEUED) {
                    store.transition(device, request.id(), QUEUED, RpcStatus.EXPIRED, null, null);
                  }
                  continue;
                }
                // SENT too: a request left SENT by a node that stopped is sent again (at least
                // once). One this node tracks is offered again only if nobody took it.
                PersistentDelivery tracked = inFlight.get(request.id());
                if (tracked != null && tracked.subscribedAgain()) {
                  tracked.replace();
                  tracked = null;
                }
                if (tracked == null) {
                  offerPersistent(request);
                }
              }
            });
  }

  /** Ends every waiting lightweight call ({@link RpcOutcome.Stopped}) and stops the timers. */
  @Override
  public void close() {
    closed = true;
    subscription.close();
    List<LightweightCall> all = waiting.values().stream().flatMap(Set::stream).toList();
    all.forEach(call -> call.finish(new RpcOutcome.Stopped()));
    timer.shutdownNow();
  }
}
