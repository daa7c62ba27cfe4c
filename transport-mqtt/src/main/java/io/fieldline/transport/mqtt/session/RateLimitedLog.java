package io.fieldline.transport.mqtt.session;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * One log line at most once per interval per instance, counting what was suppressed: a misbehaving
 * fleet must not fill the disk. Each instance is one budget: keep one instance per kind of event
 * (per {@link CloseReason}, per refusal), so that a flood of one kind does not hide the others.
 * Thread-safe: every event loop logs through the same instances.
 */
public final class RateLimitedLog {

  private final Logger log;
  private final long intervalNanos;
  private final AtomicLong nextAllowed = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong suppressed = new AtomicLong();

  public RateLimitedLog(Logger log, long interval, TimeUnit unit) {
    this.log = log;
    this.intervalNanos = unit.toNanos(interval);
  }

  /** Logs at WARN unless this instance logged less than one interval ago. */
  public void warn(String format, Object... args) {
    long skipped = admit();
    if (skipped < 0) {
      return;
    }
    if (skipped > 0) {
      log.warn("({} similar lines suppressed)", skipped);
    }
    log.warn(format, args);
  }

  /** Logs at INFO unless this instance logged less than one interval ago. */
  public void info(String format, Object... args) {
    long skipped = admit();
    if (skipped < 0) {
      return;
    }
    if (skipped > 0) {
      log.info("({} similar lines suppressed)", skipped);
    }
    log.info(format, args);
  }

  /** The number of lines suppressed since the last one, or -1 if this one is suppressed too. */
  private long admit() {
    long now = System.nanoTime();
    long next = nextAllowed.get();
    if ((next == Long.MIN_VALUE || now - next >= 0)
        && nextAllowed.compareAndSet(next, now + intervalNanos)) {
      return suppressed.getAndSet(0);
    }
    suppressed.incrementAndGet();
    return -1;
  }
}
