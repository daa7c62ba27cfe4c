package io.fieldline.transport.mqtt.session;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * WARN at most once per interval per instance, counting what was suppressed: a misbehaving fleet
 * must not fill the disk. Each instance is one budget, held in a static field of the class that
 * logs. Thread-safe: every event loop logs through the same instance.
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
    long now = System.nanoTime();
    long next = nextAllowed.get();
    if ((next == Long.MIN_VALUE || now - next >= 0)
        && nextAllowed.compareAndSet(next, now + intervalNanos)) {
      long skipped = suppressed.getAndSet(0);
      if (skipped > 0) {
        log.warn("({} similar warnings suppressed)", skipped);
      }
      log.warn(format, args);
    } else {
      suppressed.incrementAndGet();
    }
  }
}
