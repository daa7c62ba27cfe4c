package io.fieldline.fleet.rpc;

import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.rpc.PersistentRpcStore;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to deliver a stored (persistent) request, while this node tracks it.
 *
 * <p>What the session reports becomes the request's status in storage, each move guarded by the
 * statuses it may come from (reports that cross — a PUBACK after the answer — cannot move it
 * backwards) and issued in the order of the reports. Reports are stored even after this node
 * stopped tracking the attempt: a peer that answered the offer late was counted as taking nothing,
 * yet its device's answer is still the answer.
 *
 * <p>The attempt ends — and the node stops tracking it — when the request is answered (two-way),
 * delivered (one-way) or given up by the session; when it was sent and not answered within its
 * {@code timeout} (queued again and offered again at once while it has retries left, {@code
 * TIMEOUT} otherwise); or when nobody reported anything within {@code timeout} plus a margin after
 * the offer (its taker vanished; the request keeps its stored status for the next subscription).
 *
 * <p>Thread-safe.
 */
final class PersistentDelivery implements RpcCallback {

  private static final Logger LOG = LoggerFactory.getLogger(PersistentDelivery.class);

  /** How much longer than its timeout an offer may stay without any report before it is dropped. */
  static final Duration SILENCE_MARGIN = Duration.ofSeconds(10);

  private static final Set<RpcStatus> QUEUED = EnumSet.of(RpcStatus.QUEUED);
  private static final Set<RpcStatus> SENT = EnumSet.of(RpcStatus.SENT);
  private static final Set<RpcStatus> NOT_DELIVERED = EnumSet.of(RpcStatus.QUEUED, RpcStatus.SENT);
  private static final Set<RpcStatus> UNANSWERED =
      EnumSet.of(RpcStatus.QUEUED, RpcStatus.SENT, RpcStatus.DELIVERED);
  private static final Set<RpcStatus> IN_FLIGHT = EnumSet.of(RpcStatus.SENT, RpcStatus.DELIVERED);

  private enum Phase {
    /** Published; the count of takers has not come back. */
    OFFERING,
    /** Nobody took it (as far as the count knows). */
    UNTAKEN,
    /** A session has it. */
    TAKEN,
    ENDED
  }

  /** What the delivery tells its service. */
  interface Owner {
    /**
     * The attempt is over; {@code retry} is the request to offer again at once, if any: the same
     * request after a session gave it up (one re-offer fewer left), or a new one with one retry
     * fewer after a timeout.
     */
    void ended(PersistentDelivery delivery, @Nullable ToDeviceRpc retry);
  }

  private final ToDeviceRpc rpc;
  private final int reoffers;
  private final PersistentRpcStore store;
  private final ScheduledExecutorService timer;
  private final Owner owner;
  private Phase phase = Phase.OFFERING;
  private boolean offerAgain;
  private boolean answerClock;
  private @Nullable ScheduledFuture<?> clock;
  private CompletionStage<?> lastMove = CompletableFuture.completedFuture(null);

  /**
   * @param reoffers how many more times a request given up by a session is offered again at once
   *     (see {@link LightweightCall#IMMEDIATE_REOFFERS})
   */
  PersistentDelivery(
      ToDeviceRpc rpc,
      int reoffers,
      PersistentRpcStore store,
      ScheduledExecutorService timer,
      Owner owner) {
    this.rpc = rpc;
    this.reoffers = reoffers;
    this.store = store;
    this.timer = timer;
    this.owner = owner;
  }

  ToDeviceRpc rpc() {
    return rpc;
  }

  int reoffers() {
    return reoffers;
  }

  /** Publishes the offer and starts watching for silence. */
  void offer(DeviceEvents events) {
    synchronized (this) {
      clock = schedule(this::silent, rpc.timeoutMillis() + SILENCE_MARGIN.toMillis());
    }
    events
        .publish(new DeviceEvent.RpcRequested(rpc.deviceId(), rpc, this))
        .thenAccept(this::offered);
  }

  private void offered(int takers) {
    boolean again;
    synchronized (this) {
      if (phase != Phase.OFFERING) {
        return;
      }
      phase = takers > 0 ? Phase.TAKEN : Phase.UNTAKEN;
      again = phase == Phase.UNTAKEN && offerAgain;
    }
    if (again) {
      end(rpc);
    }
  }

  /**
   * A session of the device subscribed while this attempt is tracked.
   *
   * @return true when the attempt was not taken and should be replaced by a new offer now (call
   *     {@link #replace}); false when it is under way (it is offered again once its count comes
   *     back empty) or a session has it
   */
  synchronized boolean subscribedAgain() {
    if (phase == Phase.OFFERING) {
      offerAgain = true;
    }
    return phase == Phase.UNTAKEN;
  }

  /** Stops tracking an attempt nobody took, so that a new offer can take its place. */
  void replace() {
    end(null);
  }

  @Override
  public void sent() {
    taken();
    move(QUEUED, RpcStatus.SENT, null, null);
  }

  @Override
  public void delivered() {
    taken();
    if (rpc.oneway()) {
      move(NOT_DELIVERED, RpcStatus.SUCCESSFUL, null, null);
      end(null);
    } else {
      move(NOT_DELIVERED, RpcStatus.DELIVERED, null, null);
    }
  }

  @Override
  public void responded(String body) {
    if (!rpc.oneway()) {
      move(UNANSWERED, RpcStatus.SUCCESSFUL, body, null);
      end(null);
    }
  }

  // Offered again at once (within its budget) once the request is back to QUEUED, so that the
  // next attempt's moves come after this one's.
  @Override
  public void undelivered(String reason) {
    move(SENT, RpcStatus.QUEUED, null, null)
        .whenComplete((moved, error) -> end(reoffers > 0 ? rpc : null));
  }

  // The answer's clock starts at the first sent/delivered, replacing the silence watch.
  private void taken() {
    synchronized (this) {
      if (phase == Phase.ENDED || answerClock) {
        return;
      }
      phase = Phase.TAKEN;
      answerClock = true;
      if (clock != null) {
        clock.cancel(false);
      }
      clock = schedule(this::timedOut, rpc.timeoutMillis());
    }
  }

  private void silent() {
    end(null);
  }

  private void timedOut() {
    synchronized (this) {
      if (phase == Phase.ENDED) {
        return;
      }
    }
    if (rpc.retries() > 0) {
      ToDeviceRpc retry = rpc.withRetries(rpc.retries() - 1);
      move(IN_FLIGHT, RpcStatus.QUEUED, null, retry.retries())
          .whenComplete((moved, error) -> end(Boolean.TRUE.equals(moved) ? retry : null));
    } else {
      move(IN_FLIGHT, RpcStatus.TIMEOUT, null, null);
      end(null);
    }
  }

  /** Ends the attempt once: stops its clock and tells the owner. */
  private void end(@Nullable ToDeviceRpc retry) {
    ScheduledFuture<?> stopped;
    synchronized (this) {
      if (phase == Phase.ENDED) {
        return;
      }
      phase = Phase.ENDED;
      stopped = clock;
    }
    if (stopped != null) {
      stopped.cancel(false);
    }
    owner.ended(this, retry);
  }

  private @Nullable ScheduledFuture<?> schedule(Runnable action, long delayMillis) {
    try {
      return timer.schedule(action, delayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException stopping) {
      return null; // the service is closing: nothing more is watched
    }
  }

  // Moves run one after the other, in the order of the reports.
  private synchronized CompletionStage<Boolean> move(
      Set<RpcStatus> from, RpcStatus to, @Nullable String response, @Nullable Integer retriesLeft) {
    CompletionStage<Boolean> moved =
        lastMove
            .handle((previous, error) -> null)
            .thenCompose(
                ignored ->
                    store.transition(rpc.deviceId(), rpc.id(), from, to, response, retriesLeft))
            .whenComplete(
                (done, error) -> {
                  if (error != null) {
                    LOG.warn("[rpc] persistent request {} not moved to {}", rpc.id(), to, error);
                  }
                });
    lastMove = moved;
    return moved;
  }
}
