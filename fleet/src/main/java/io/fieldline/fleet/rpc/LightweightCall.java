package io.fieldline.fleet.rpc;

import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * One lightweight (not persistent) server-side RPC while its REST call waits, as ThingsBoard runs
 * it: offered to the device's sessions at once, and offered again each time a session of the device
 * subscribes to RPC, until a session takes it, or until its deadline (the request's {@code
 * expirationTime}), which answers {@link RpcOutcome.TimedOut} on time whatever else happens. A
 * one-way call ends when the request is delivered, a two-way call when the device answers.
 *
 * <p>Each offer is an {@link Attempt} with its own callback: a session's report is read against the
 * offer it answers, so a late "given up" from an earlier offer cannot undo a later one, and a
 * session that gives the request up before the offer's count of takers arrives (its report can
 * overtake the count across nodes) is subtracted from that count.
 *
 * <p>Thread-safe: sessions report from their event loops, on this node or through the cluster.
 */
final class LightweightCall {

  private enum State {
    /** No session has it: waiting for one to subscribe. */
    WAITING,
    /** Being offered (the publish has not answered yet). */
    OFFERING,
    /** A session took it. */
    TAKEN,
    DONE
  }

  /**
   * How many times a request given up by a session is offered again at once, without waiting for a
   * subscription: the device may already be subscribed elsewhere (it moved to another node, whose
   * subscription overtook this report). Bounded, as a session may give the same request up every
   * time (too large for its client).
   */
  static final int IMMEDIATE_REOFFERS = 2;

  private final ToDeviceRpc rpc;
  private final DeviceEvents events;
  private int immediateReoffers = IMMEDIATE_REOFFERS;
  private final CompletableFuture<RpcOutcome> outcome = new CompletableFuture<>();
  private State state = State.WAITING;
  private int attempts;
  private int givenUpWhileOffering;
  private boolean offerAgain;
  private @Nullable ScheduledFuture<?> deadline;

  LightweightCall(ToDeviceRpc rpc, DeviceEvents events) {
    this.rpc = rpc;
    this.events = events;
  }

  ToDeviceRpc rpc() {
    return rpc;
  }

  CompletableFuture<RpcOutcome> outcome() {
    return outcome;
  }

  synchronized void deadline(ScheduledFuture<?> timer) {
    this.deadline = timer;
  }

  /** Offers the request to the device's sessions, unless one has it or an offer is under way. */
  void offer() {
    Attempt attempt;
    synchronized (this) {
      if (state == State.OFFERING) {
        // A session subscribed while the publish runs: it may have missed this offer.
        offerAgain = true;
        return;
      }
      if (state != State.WAITING) {
        return;
      }
      state = State.OFFERING;
      offerAgain = false;
      givenUpWhileOffering = 0;
      attempt = new Attempt(++attempts);
    }
    events
        .publish(new DeviceEvent.RpcRequested(rpc.deviceId(), rpc, attempt))
        .thenAccept(takers -> offered(attempt, takers));
  }

  private void offered(Attempt attempt, int takers) {
    boolean again;
    synchronized (this) {
      if (state != State.OFFERING || attempt.number != attempts) {
        return;
      }
      state = takers > givenUpWhileOffering ? State.TAKEN : State.WAITING;
      again = state == State.WAITING && offerAgain;
    }
    if (again) {
      offer();
    }
  }

  /** Ends the call with {@code result} unless it has ended; returns whether it did now. */
  boolean finish(RpcOutcome result) {
    ScheduledFuture<?> timer;
    synchronized (this) {
      if (state == State.DONE) {
        return false;
      }
      state = State.DONE;
      timer = deadline;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    outcome.complete(result);
    return true;
  }

  /** The callback of one offer. */
  private final class Attempt implements RpcCallback {

    private final int number;

    Attempt(int number) {
      this.number = number;
    }

    // A session has it, whatever the offer's count said (a peer that answered the count late was
    // counted as none).
    @Override
    public void sent() {
      synchronized (LightweightCall.this) {
        if (number == attempts && state == State.WAITING) {
          state = State.TAKEN;
        }
      }
    }

    @Override
    public void delivered() {
      sent();
      if (rpc.oneway()) {
        finish(new RpcOutcome.Delivered());
      }
    }

    // The device's answer counts whichever offer carried the request to it.
    @Override
    public void responded(String body) {
      if (!rpc.oneway()) {
        finish(new RpcOutcome.Responded(body));
      }
    }

    // Offered again at once a bounded number of times, then left for the next subscription.
    @Override
    public void undelivered(String reason) {
      boolean again;
      synchronized (LightweightCall.this) {
        if (number != attempts) {
          return;
        }
        again = false;
        if (state == State.OFFERING) {
          givenUpWhileOffering++;
        } else if (state == State.TAKEN) {
          state = State.WAITING;
          again = immediateReoffers-- > 0;
        }
      }
      if (again) {
        offer();
      }
    }
  }
}
