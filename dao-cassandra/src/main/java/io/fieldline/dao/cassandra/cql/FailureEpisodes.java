package io.fieldline.dao.cassandra.cql;

import io.fieldline.common.StoreException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Logs storage failures without flooding: one WARN when a failure episode starts (the first failure
 * after a success), one INFO when it ends (the next success) with the number of failures, and at
 * most one further WARN per {@code reminderNanos} while it lasts. The failures themselves are
 * rethrown to callers, who must not log them again. Thread-safe; called from driver threads.
 */
public final class FailureEpisodes {

  private final Logger log;
  private final String what;
  private final long reminderNanos;
  private final LongSupplier nanoClock;
  private final AtomicBoolean failing = new AtomicBoolean();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong lastWarnNanos = new AtomicLong();

  /**
   * @param log where to log
   * @param what what is failing, e.g. "[cql] telemetry writes"
   * @param reminderSeconds minimum seconds between WARNs during one long episode
   */
  public FailureEpisodes(Logger log, String what, long reminderSeconds) {
    this(log, what, TimeUnit.SECONDS.toNanos(reminderSeconds), System::nanoTime);
  }

  FailureEpisodes(Logger log, String what, long reminderNanos, LongSupplier nanoClock) {
    this.log = log;
    this.what = what;
    this.reminderNanos = reminderNanos;
    this.nanoClock = nanoClock;
  }

  /** Records a failure; logs WARN if it starts an episode or the reminder interval passed. */
  public void onFailure(StoreException error) {
    long count = failures.incrementAndGet();
    long now = nanoClock.getAsLong();
    if (failing.compareAndSet(false, true)) {
      lastWarnNanos.set(now);
      log.warn("{} failing ({}): {}", what, error.kind(), error.getMessage());
      return;
    }
    long last = lastWarnNanos.get();
    if (now - last >= reminderNanos && lastWarnNanos.compareAndSet(last, now)) {
      log.warn(
          "{} still failing, {} failures so far ({}): {}",
          what,
          count,
          error.kind(),
          error.getMessage());
    }
  }

  /** Records a success; logs INFO if it ends an episode. Cheap when nothing failed. */
  public void onSuccess() {
    if (failing.get() && failing.compareAndSet(true, false)) {
      log.info("{} recovered after {} failures", what, failures.getAndSet(0));
    }
  }

  /** Whether the last outcome was a failure. */
  public boolean isFailing() {
    return failing.get();
  }
}
