package io.fieldline.actors;

import io.fieldline.common.Ack;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The per-message timeout of {@link LocalDeviceGateway}: rejects an acknowledgement still pending
 * after {@code ack-timeout} as {@code WRITE_FAILED "timeout"}, and at shutdown rejects every
 * still-pending one as {@code UNAVAILABLE}, so no acknowledgement outlives the gateway.
 *
 * <p>One shared daemon thread ({@code fieldline-ack-timeout}) for all messages; a deadline is
 * cancelled (and removed from the queue) as soon as its acknowledgement completes. Independent of
 * the actor system's scheduler on purpose: it still fires for messages lost in the mailboxes of a
 * terminating actor system. Thread-safe.
 */
final class AckDeadlines {

  private static final Ack TIMED_OUT = Ack.rejected(Ack.Reason.WRITE_FAILED, "timeout");
  private static final Ack CLOSED = Ack.rejected(Ack.Reason.UNAVAILABLE, "shut down");

  private final ScheduledThreadPoolExecutor timer;
  private final long timeoutNanos;
  private final ActorMetrics metrics;
  private volatile boolean closed;

  AckDeadlines(Duration timeout, ActorMetrics metrics) {
    this.timeoutNanos = timeout.toNanos();
    this.metrics = metrics;
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, "fieldline-ack-timeout");
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
  }

  /**
   * Arms the deadline of {@code ack}.
   *
   * @return false if the deadlines are closed (the caller must reject the message itself)
   */
  boolean arm(CompletableFuture<Ack> ack) {
    ScheduledFuture<?> deadline;
    try {
      deadline = timer.schedule(new Deadline(ack), timeoutNanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return false;
    }
    ack.whenComplete((outcome, failure) -> deadline.cancel(false));
    return true;
  }

  /** Stops the timer and rejects every acknowledgement still pending, on the calling thread. */
  void close() {
    closed = true;
    for (Runnable pending : timer.shutdownNow()) {
      pending.run();
    }
  }

  private final class Deadline implements Runnable {
    private final CompletableFuture<Ack> ack;

    Deadline(CompletableFuture<Ack> ack) {
      this.ack = ack;
    }

    @Override
    public void run() {
      metrics.complete(ack, closed ? CLOSED : TIMED_OUT);
    }
  }
}
