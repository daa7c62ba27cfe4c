package io.fieldline.common.log;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * One log budget: a line at most every 10 seconds, counting the lines left out, so that a
 * misbehaving client, fleet or peer cannot fill the disk. Keep one instance per kind of line (per
 * close reason, per refusal), so that a flood of one kind does not hide the others. The one
 * rate-limited log of every module: the server counts the lines of all budgets together ({@code
 * fieldline.http.log.lines{result}}, from {@link #logged} and {@link #suppressedInAll}).
 *
 * <p>Three ways to use it: {@link #warn} and {@link #info} write the line, preceded by the count of
 * lines left out since the last one; {@link #warnElseDebug} writes a line left out at DEBUG instead
 * (for peers: one WARN per 10 s says it goes on, DEBUG has them all); {@link #admit} lets the
 * caller write the line its own way. Thread-safe: one compare-and-set per line, no lock.
 */
public final class LogThrottle {

  private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
  // Over every budget of the process.
  private static final AtomicLong LOGGED = new AtomicLong();
  private static final AtomicLong SUPPRESSED = new AtomicLong();

  private final LongSupplier nanoClock;
  private final AtomicLong next;
  private final AtomicLong suppressed = new AtomicLong();

  public LogThrottle() {
    this(System::nanoTime);
  }

  /** With a test clock ({@code nanoClock} as {@link System#nanoTime()}). */
  public LogThrottle(LongSupplier nanoClock) {
    this.nanoClock = nanoClock;
    this.next = new AtomicLong(nanoClock.getAsLong());
  }

  /**
   * Takes this line if the budget allows it.
   *
   * @return the lines left out since the last one taken, or -1 if this one is left out too
   */
  public long admit() {
    long now = nanoClock.getAsLong();
    long due = next.get();
    if (now - due < 0 || !next.compareAndSet(due, now + INTERVAL_NANOS)) {
      suppressed.incrementAndGet();
      SUPPRESSED.incrementAndGet();
      return -1;
    }
    LOGGED.incrementAndGet();
    return suppressed.getAndSet(0);
  }

  /** Logs at WARN if the budget allows it, after the count of the lines left out (if any). */
  public void warn(Logger log, String format, Object... args) {
    long skipped = admit();
    if (skipped < 0) {
      return;
    }
    if (skipped > 0) {
      log.warn("({} similar lines suppressed)", skipped);
    }
    log.warn(format, args);
  }

  /** Logs at INFO if the budget allows it, after the count of the lines left out (if any). */
  public void info(Logger log, String format, Object... args) {
    long skipped = admit();
    if (skipped < 0) {
      return;
    }
    if (skipped > 0) {
      log.info("({} similar lines suppressed)", skipped);
    }
    log.info(format, args);
  }

  /** Logs at WARN if the budget allows it, else at DEBUG. */
  public void warnElseDebug(Logger log, String format, Object... args) {
    if (admit() >= 0) {
      log.warn(format, args);
    } else if (log.isDebugEnabled()) {
      log.debug(format, args);
    }
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
