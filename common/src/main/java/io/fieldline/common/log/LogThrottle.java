package io.fieldline.common.log;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One log budget: a line at most every 10 seconds, counting the lines left out, so that a
 * misbehaving client or fleet cannot fill the disk. Keep one instance per kind of line, so that a
 * flood of one kind does not hide the others. The one rate-limited log of every module: the server
 * counts the lines of all budgets together ({@code fieldline.http.log.lines{result}}, from {@link
 * #logged} and {@link #suppressedInAll}). Thread-safe.
 */
public final class LogThrottle {

  private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
  // Over every budget of the process.
  private static final AtomicLong LOGGED = new AtomicLong();
  private static final AtomicLong SUPPRESSED = new AtomicLong();

  private final AtomicLong next = new AtomicLong(System.nanoTime());
  private final AtomicLong suppressed = new AtomicLong();

  /**
   * Takes this line if the budget allows it.
   *
   * @return the lines left out since the last one taken, or -1 if this one is left out too
   */
  public long admit() {
    long now = System.nanoTime();
    long due = next.get();
    if (now - due < 0 || !next.compareAndSet(due, now + INTERVAL_NANOS)) {
      suppressed.incrementAndGet();
      SUPPRESSED.incrementAndGet();
      return -1;
    }
    LOGGED.incrementAndGet();
    return suppressed.getAndSet(0);
  }

  /** Lines taken by every budget of the process. */
  public static long logged() {
    return LOGGED.get();
  }

  /** Lines left out by every budget of the process. */
  public static long suppressedInAll() {
    return SUPPRESSED.get();
  }
}
