package io.fieldline.cluster.peer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs failures to reach peers at WARN at most once per 10 s, the others at DEBUG: a peer that is
 * down fails every notice and every event sent to it, and a fleet's worth of those must not fill
 * the disk, while one line per 10 s still says it goes on (the counters have the numbers).
 * Thread-safe.
 */
public final class RateLimitedWarn {

  private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final Logger log;
  private final String prefix;
  private final AtomicLong lastWarnNanos = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);

  /**
   * @param log the caller's logger
   * @param prefix put before every message, for example {@code [takeover|node-1] }; node ids are
   *     validated to a safe alphabet, so it holds no {@code {}}
   */
  public RateLimitedWarn(Logger log, String prefix) {
    this.log = log;
    this.prefix = prefix;
  }

  /** Logs {@code format} with {@code args} (SLF4J placeholders) at WARN, or DEBUG if too soon. */
  public void warn(String format, Object... args) {
    long now = System.nanoTime();
    long last = lastWarnNanos.get();
    if (now - last >= INTERVAL_NANOS && lastWarnNanos.compareAndSet(last, now)) {
      log.warn(prefix + format, args);
    } else if (log.isDebugEnabled()) {
      log.debug(prefix + format, args);
    }
  }
}
