package io.fieldline.actors;

import io.fieldline.common.kv.Ack;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-message timeout of {@link LocalDeviceInbox}: rejects an acknowledgement still pending
 * after {@code ack-timeout} as {@code WRITE_FAILED "timeout"}, and at shutdown rejects every
 * still-pending one as {@code UNAVAILABLE}, so no acknowledgement outlives the gateway.
 *
 * <p>Every message has the same timeout, so deadlines fall due in the order they were armed: arming
 * appends to one FIFO queue, and one daemon thread ({@code fieldline-ack-timeout}) wakes every
 * {@link #resolution} to take the due ones from its head, completing those not yet completed.
 * Nothing is cancelled: an acknowledgement that completed in time is simply dropped when its entry
 * falls due. So arming costs one queue entry and no lock, timer or wake-up per message (a scheduled
 * task per message, cancelled on completion, cost both), at the price of a deadline firing up to
 * one resolution late and of completed acknowledgements staying referenced until their deadline
 * (about 100 bytes each: ~15 MB at 10,000 msgs/s with a 15 s timeout).
 *
 * <p>Independent of the actor system's scheduler on purpose: it still fires for messages lost in
 * the mailboxes of a terminating actor system. Thread-safe.
 */
final class AckDeadlines {

  private static final Logger LOG = LoggerFactory.getLogger(AckDeadlines.class);

  private static final Ack TIMED_OUT = Ack.rejected(Ack.Reason.WRITE_FAILED, "timeout");
  private static final Ack CLOSED = Ack.rejected(Ack.Reason.UNAVAILABLE, "shut down");

  /** Coarsest resolution: a hundredth of the timeout, but at least 10 ms and at most 200 ms. */
  static Duration resolution(Duration timeout) {
    long millis = Math.max(10, Math.min(200, timeout.toMillis() / 100));
    return Duration.ofMillis(millis);
  }

  private record Deadline(long dueNanos, CompletableFuture<Ack> ack) {}

  private final ConcurrentLinkedQueue<Deadline> queue = new ConcurrentLinkedQueue<>();
  private final ScheduledExecutorService timer;
  private final long timeoutNanos;
  private final ActorMetrics metrics;
  private volatile boolean closed;

  AckDeadlines(Duration timeout, ActorMetrics metrics) {
    this.timeoutNanos = timeout.toNanos();
    this.metrics = metrics;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "fieldline-ack-timeout");
              thread.setDaemon(true);
              return thread;
            });
    long tick = resolution(timeout).toNanos();
    timer.scheduleWithFixedDelay(this::expire, tick, tick, TimeUnit.NANOSECONDS);
  }

  /**
   * Arms the deadline of {@code ack}.
   *
   * @return false if the deadlines are closed (the caller must reject the message itself)
   */
  boolean arm(CompletableFuture<Ack> ack) {
    if (closed) {
      return false;
    }
    queue.add(new Deadline(System.nanoTime() + timeoutNanos, ack));
    if (closed) {
      // close() may have drained the queue before this entry arrived: reject it here instead.
      metrics.complete(ack, CLOSED);
      return false;
    }
    return true;
  }

  /** Stops the timer and rejects every acknowledgement still pending, on the calling thread. */
  void close() {
    closed = true;
    timer.shutdownNow();
    for (Deadline deadline = queue.poll(); deadline != null; deadline = queue.poll()) {
      metrics.complete(deadline.ack(), CLOSED);
    }
  }

  // A periodic task that throws is never run again: nothing may escape, or no deadline would fire
  // any more.
  private void expire() {
    long now = System.nanoTime();
    for (Deadline head = queue.peek(); head != null; head = queue.peek()) {
      if (head.dueNanos() - now > 0) {
        return;
      }
      queue.poll();
      try {
        if (!head.ack().isDone()) {
          metrics.complete(head.ack(), TIMED_OUT);
        }
      } catch (Throwable e) { // NOPMD: this task must outlive any failure of one completion
        LOG.error("[actors] completing a timed-out acknowledgement failed", e);
      }
    }
  }
}
