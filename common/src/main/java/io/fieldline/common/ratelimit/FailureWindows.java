package io.fieldline.common.ratelimit;

import com.github.benmanes.caffeine.cache.Cache;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Failures per key (a user name, a source address) counted in a fixed window that starts at the
 * key's first failure; once the count reaches {@code maxFailures} the key is locked out until the
 * window ends. The lockout of the REST login and of provisioning secrets. Not a token bucket on
 * purpose: a locked-out key waits for the whole window, as a password lockout does, and a new
 * window starts with the first failure after it (not on a fixed grid).
 *
 * <p>A key is held from its first failure to its window's end, at most {@code maxKeys} of them
 * (when full, Caffeine forgets one; it starts from zero if it comes back). Thread-safe: each key's
 * count is replaced only inside the table's {@code compute} for that key.
 *
 * @param <K> the key
 */
public final class FailureWindows<K> {

  /** One key's failures since {@code start} (nano clock). Replaced, never changed in place. */
  private record Window(int failures, long start, long end) {}

  private final int maxFailures;
  private final long windowNanos;
  private final LongSupplier nanoClock;
  private final Cache<K, Window> windows;

  /**
   * @param maxFailures failures in a window that lock the key out
   * @param window the length of a window
   * @param maxKeys keys held at most
   * @param nanoClock as {@link System#nanoTime()}
   */
  public FailureWindows(int maxFailures, Duration window, int maxKeys, LongSupplier nanoClock) {
    this.maxFailures = maxFailures;
    this.windowNanos = window.toNanos();
    this.nanoClock = nanoClock;
    this.windows =
        BoundedTables.idleAfter(maxKeys, nanoClock, w -> w.end() - nanoClock.getAsLong());
  }

  /** Counts one failure of {@code key}, starting a window if it has none. */
  public void failed(K key) {
    long now = nanoClock.getAsLong();
    windows
        .asMap()
        .compute(
            key,
            (k, w) ->
                w == null || now - w.end() >= 0
                    ? new Window(1, now, now + windowNanos)
                    : new Window(w.failures() + 1, w.start(), w.end()));
  }

  /** Nanoseconds until {@code key} may try again; zero when it is not locked out. */
  public long lockedFor(K key) {
    Window w = windows.getIfPresent(key);
    if (w == null || w.failures() < maxFailures) {
      return 0;
    }
    return Math.max(0, w.end() - nanoClock.getAsLong());
  }

  /** Forgets {@code key}'s failures. */
  public void clear(K key) {
    windows.invalidate(key);
  }

  /** Keys held now. */
  public int tracked() {
    return BoundedTables.size(windows);
  }
}
