package io.fieldline.server.http;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One log budget: a line at most every 10 seconds, counting the lines left out, so that a
 * misbehaving client or fleet cannot fill the disk. Keep one instance per kind of line, so that a
 * flood of one kind does not hide the others. Thread-safe.
 */
public final class LogThrottle {

  private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

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
      return -1;
    }
    return suppressed.getAndSet(0);
  }

  /** Lines left out since the last one taken (for tests and metrics). */
  public long suppressed() {
    return suppressed.get();
  }
}
