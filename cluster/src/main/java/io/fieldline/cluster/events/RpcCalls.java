package io.fieldline.cluster.events;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The callers on this node of server-side RPCs offered to other nodes. An {@link
 * DeviceEvent.RpcRequested} published here is registered under a call id before it leaves; a
 * session on another node that takes it reports each step back ({@code RpcProgress}), and {@link
 * #progress} passes the step to the caller's real {@link RpcCallback}.
 *
 * <p>An entry is removed when the first of these happens:
 *
 * <ul>
 *   <li>the RPC is settled: the device responded, or a one-way RPC was delivered;
 *   <li>every peer answered the event and the listeners that took it there (if any) all gave it up
 *       ({@code undelivered}): nobody is left to report;
 *   <li>its deadline: the time left until the RPC's {@code expirationTime}, plus its {@code
 *       timeoutMillis}, plus {@code event-timeout}. No caller waits longer: a lightweight caller
 *       gives up at the {@code expirationTime}; a session does not send a request after it, and a
 *       persistent caller waits for the answer {@code timeoutMillis} after {@code sent}. The margin
 *       is for the reports' trip. A later report would only be ignored.
 * </ul>
 *
 * A report for a call that is not (or no longer) here is dropped and counted: its caller is gone.
 * Each publish of an RPC has its own entry, also when the caller offers the same request again (a
 * session subscribed): each session reports to the offer it took. An offer nobody took is forgotten
 * at once; one that a peer may have taken (the peer did not answer) waits for its deadline, within
 * the bound.
 *
 * <p>Bound: at most {@code max} entries; {@link #register} refuses beyond it, and the RPC is then
 * offered to this node's listeners only. Call ids start at a random value, so a node restarted
 * under the same id does not take a report meant for its previous run for one of its own calls.
 *
 * <p>Thread-safe. Callbacks are invoked on the thread reporting the step (the gRPC executor), never
 * under a lock; the {@link RpcCallback} contract has them ignore what comes after the outcome.
 */
final class RpcCalls {

  private static final Logger LOG = LoggerFactory.getLogger(RpcCalls.class);

  private final int max;
  private final Duration margin;
  private final ScheduledExecutorService timer;
  private final ClusterMetrics metrics;
  private final Map<Long, Call> calls = new ConcurrentHashMap<>();
  private final AtomicInteger size = new AtomicInteger();
  private final AtomicLong nextId = new AtomicLong(ThreadLocalRandom.current().nextLong());
  private final LogThrottle warnings = new LogThrottle();
  // Put before every throttled line; node ids are validated to a safe alphabet (no {}).
  private final String warnPrefix;

  /**
   * @param max most entries ({@code max-pending-rpc-calls})
   * @param margin added to each call's lifetime for the reports' trip ({@code event-timeout})
   * @param timer runs the deadlines
   */
  RpcCalls(
      String selfId,
      int max,
      Duration margin,
      ScheduledExecutorService timer,
      ClusterMetrics metrics) {
    this.warnPrefix = "[events|" + selfId + "] ";
    this.max = max;
    this.margin = margin;
    this.timer = timer;
    this.metrics = metrics;
  }

  /** Registers the event's callback; empty if {@code max} calls are already waiting. */
  OptionalLong register(DeviceEvent.RpcRequested event) {
    if (size.incrementAndGet() > max) {
      size.decrementAndGet();
      metrics.rpcCallRefused();
      return OptionalLong.empty();
    }
    metrics.rpcCallsPending(1);
    ToDeviceRpc rpc = event.rpc();
    Call call = new Call(nextId.getAndIncrement(), rpc, event.callback());
    calls.put(call.id, call);
    long untilExpiry = Math.max(rpc.expirationTime() - System.currentTimeMillis(), 0);
    long lifetime = untilExpiry + rpc.timeoutMillis() + margin.toMillis();
    try {
      call.expiry = timer.schedule(() -> remove(call), lifetime, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      remove(call); // shutting down
    }
    return OptionalLong.of(call.id);
  }

  /**
   * Every peer has been sent the call's event and answered, failed or timed out.
   *
   * @param taken how many listeners took it on the peers that answered
   * @param everyPeerAnswered false if a peer failed or timed out: one of its listeners may have
   *     taken it all the same, so the call waits for reports until settled or its deadline
   */
  void peersAnswered(long id, int taken, boolean everyPeerAnswered) {
    Call call = calls.get(id);
    if (call == null) {
      return;
    }
    boolean done;
    synchronized (call) {
      call.remoteTakers += taken;
      call.peersDone = everyPeerAnswered;
      done = call.nobodyLeft();
    }
    if (done) {
      remove(call);
    }
  }

  /**
   * Passes one reported step to its caller.
   *
   * @return false if no such call waits here (settled, expired, another run's): dropped
   * @throws IllegalArgumentException if the report names no step
   */
  boolean progress(RpcProgress report) {
    Call call = calls.get(report.getCallId());
    if (call == null || !call.rpc.id().equals(MessageCodec.javaUuid(report.getRpcId()))) {
      return false;
    }
    if (report.getStepCase() == RpcProgress.StepCase.STEP_NOT_SET) {
      throw new IllegalArgumentException("RPC progress without a step");
    }
    try {
      step(call, report);
    } catch (RuntimeException e) {
      // The caller's bug; the report did arrive, and the stream must go on.
      warnings.warnElseDebug(
          LOG, warnPrefix + "RPC {} callback failed: {}", call.rpc.id(), e.toString());
    }
    return true;
  }

  private void step(Call call, RpcProgress report) {
    switch (report.getStepCase()) {
      case SENT -> call.callback.sent();
      case DELIVERED -> {
        if (call.rpc.oneway()) {
          remove(call);
        }
        call.callback.delivered();
      }
      case RESPONDED -> {
        remove(call);
        call.callback.responded(report.getResponded().getBody());
      }
      case UNDELIVERED -> {
        boolean done;
        synchronized (call) {
          call.givenUp++;
          done = call.nobodyLeft();
        }
        if (done) {
          remove(call);
        }
        call.callback.undelivered(report.getUndelivered().getReason());
      }
      case STEP_NOT_SET -> {
        // checked by the caller
      }
    }
  }

  /** Calls waiting for reports. */
  int pending() {
    return size.get();
  }

  /** Forgets every call (the node stops; reports can no longer arrive). */
  void clear() {
    calls.values().forEach(this::remove);
  }

  private void remove(Call call) {
    if (calls.remove(call.id, call)) {
      size.decrementAndGet();
      metrics.rpcCallsPending(-1);
      ScheduledFuture<?> expiry = call.expiry;
      if (expiry != null) {
        expiry.cancel(false);
      }
    }
  }

  /** One waiting caller; the counts are guarded by the object's monitor. */
  private static final class Call {
    final long id;
    final ToDeviceRpc rpc;
    final RpcCallback callback;
    volatile @Nullable ScheduledFuture<?> expiry;
    int remoteTakers;
    int givenUp;
    boolean peersDone;

    Call(long id, ToDeviceRpc rpc, RpcCallback callback) {
      this.id = id;
      this.rpc = rpc;
      this.callback = callback;
    }

    boolean nobodyLeft() {
      return peersDone && givenUp >= remoteTakers;
    }
  }
}
