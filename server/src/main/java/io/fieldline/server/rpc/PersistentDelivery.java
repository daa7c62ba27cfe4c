package io.fieldline.server.rpc;

import io.fieldline.common.rpc.PersistentRpcStore;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt to deliver a stored (persistent) request: what the session reports becomes the
 * request's status in storage, each move guarded by the status it may come from, so that reports
 * that cross (a PUBACK arriving after the answer) cannot move it backwards. A request sent and not
 * answered within its {@code timeout} is queued again while it has retries left (and offered again
 * at once), and ends {@code TIMEOUT} otherwise. A request given up by the session goes back to
 * {@code QUEUED} for the device's next subscription.
 *
 * <p>Thread-safe.
 */
final class PersistentDelivery implements RpcCallback {

  private static final Logger LOG = LoggerFactory.getLogger(PersistentDelivery.class);
  private static final Set<RpcStatus> QUEUED = EnumSet.of(RpcStatus.QUEUED);
  private static final Set<RpcStatus> SENT = EnumSet.of(RpcStatus.SENT);
  private static final Set<RpcStatus> NOT_DELIVERED = EnumSet.of(RpcStatus.QUEUED, RpcStatus.SENT);
  private static final Set<RpcStatus> UNANSWERED =
      EnumSet.of(RpcStatus.QUEUED, RpcStatus.SENT, RpcStatus.DELIVERED);
  private static final Set<RpcStatus> IN_FLIGHT = EnumSet.of(RpcStatus.SENT, RpcStatus.DELIVERED);

  /** What the delivery tells its service. */
  interface Owner {
    /** The attempt is over; {@code retry} is the request to offer again at once, if any. */
    void ended(PersistentDelivery delivery, @Nullable ToDeviceRpc retry);
  }

  private final ToDeviceRpc rpc;
  private final PersistentRpcStore store;
  private final ScheduledExecutorService timer;
  private final Owner owner;
  private @Nullable ScheduledFuture<?> answerTimeout;
  private boolean ended;

  PersistentDelivery(
      ToDeviceRpc rpc, PersistentRpcStore store, ScheduledExecutorService timer, Owner owner) {
    this.rpc = rpc;
    this.store = store;
    this.timer = timer;
    this.owner = owner;
  }

  ToDeviceRpc rpc() {
    return rpc;
  }

  @Override
  public void sent() {
    if (startTimeout()) {
      move(QUEUED, RpcStatus.SENT, null, null);
    }
  }

  @Override
  public void delivered() {
    if (rpc.oneway()) {
      if (end()) {
        move(NOT_DELIVERED, RpcStatus.SUCCESSFUL, null, null);
        owner.ended(this, null);
      }
    } else if (startTimeout()) {
      move(NOT_DELIVERED, RpcStatus.DELIVERED, null, null);
    }
  }

  @Override
  public void responded(String body) {
    if (!rpc.oneway() && end()) {
      move(UNANSWERED, RpcStatus.SUCCESSFUL, body, null);
      owner.ended(this, null);
    }
  }

  @Override
  public void undelivered(String reason) {
    if (end()) {
      move(SENT, RpcStatus.QUEUED, null, null);
      owner.ended(this, null);
    }
  }

  /** Nothing took the offer: the request stays queued for the device's next subscription. */
  void notTaken() {
    if (end()) {
      owner.ended(this, null);
    }
  }

  private void timedOut() {
    if (!end()) {
      return;
    }
    if (rpc.retries() > 0) {
      ToDeviceRpc retry = rpc.withRetries(rpc.retries() - 1);
      store
          .transition(rpc.deviceId(), rpc.id(), IN_FLIGHT, RpcStatus.QUEUED, null, retry.retries())
          .whenComplete(
              (moved, error) -> {
                logFailure(error, RpcStatus.QUEUED);
                owner.ended(this, Boolean.TRUE.equals(moved) ? retry : null);
              });
    } else {
      move(IN_FLIGHT, RpcStatus.TIMEOUT, null, null);
      owner.ended(this, null);
    }
  }

  /**
   * Starts the answer's clock at the first of sent/delivered.
   *
   * @return false once the attempt has ended
   */
  private synchronized boolean startTimeout() {
    if (ended) {
      return false;
    }
    if (answerTimeout == null) {
      answerTimeout = timer.schedule(this::timedOut, rpc.timeoutMillis(), TimeUnit.MILLISECONDS);
    }
    return true;
  }

  /** Ends the attempt; returns whether it ended now (every outcome is taken once). */
  private boolean end() {
    ScheduledFuture<?> timeout;
    synchronized (this) {
      if (ended) {
        return false;
      }
      ended = true;
      timeout = answerTimeout;
    }
    if (timeout != null) {
      timeout.cancel(false);
    }
    return true;
  }

  private void move(
      Set<RpcStatus> from, RpcStatus to, @Nullable String response, @Nullable Integer retriesLeft) {
    store
        .transition(rpc.deviceId(), rpc.id(), from, to, response, retriesLeft)
        .whenComplete((moved, error) -> logFailure(error, to));
  }

  private void logFailure(@Nullable Throwable error, RpcStatus to) {
    if (error != null) {
      LOG.warn("[rpc] persistent request {} could not be moved to {}", rpc.id(), to, error);
    }
  }
}
