package io.fieldline.server.rest;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Counts failed logins per user name and per source address in a fixed window that starts at the
 * first failure; once either count reaches its maximum, logins for that name or from that address
 * are refused until the window ends. Each of the two tables keeps at most {@code maxTracked}
 * entries (least recently seen forgotten first), so a flood of names or addresses cannot grow the
 * heap; keys are truncated to {@link #MAX_KEY_LENGTH} characters.
 *
 * <p>Thread-safe: called from Pekko dispatcher threads; every method is a short critical section.
 */
final class LoginThrottle {

  static final int MAX_KEY_LENGTH = 128;

  private final Table users;
  private final Table addresses;
  private final long windowNanos;
  private final LongSupplier nanoTime;

  LoginThrottle(RestConfig config, LongSupplier nanoTime) {
    this.windowNanos = config.loginWindow().toNanos();
    this.nanoTime = nanoTime;
    this.users = new Table(config.loginMaxFailuresPerUser(), config.loginMaxTracked());
    this.addresses = new Table(config.loginMaxFailuresPerAddress(), config.loginMaxTracked());
  }

  /** How long the caller must wait, if {@code user} or {@code address} is locked out now. */
  Optional<Duration> retryAfter(String user, String address) {
    long now = nanoTime.getAsLong();
    long wait = Math.max(users.lockedFor(key(user), now), addresses.lockedFor(key(address), now));
    return wait > 0 ? Optional.of(Duration.ofNanos(wait)) : Optional.empty();
  }

  void failed(String user, String address) {
    long now = nanoTime.getAsLong();
    users.failed(key(user), now);
    addresses.failed(key(address), now);
  }

  /** A successful login clears its user name's count (not its address's). */
  void succeeded(String user) {
    users.clear(key(user));
  }

  /** Names plus addresses remembered now (for the gauge). */
  int tracked() {
    return users.size() + addresses.size();
  }

  private static String key(String value) {
    return value.length() <= MAX_KEY_LENGTH ? value : value.substring(0, MAX_KEY_LENGTH);
  }

  private final class Table {
    private final int maxFailures;
    private final Map<String, long[]> entries; // key -> {failures, windowStartNanos}

    Table(int maxFailures, int maxTracked) {
      this.maxFailures = maxFailures;
      this.entries =
          new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, long[]> eldest) {
              return size() > maxTracked;
            }
          };
    }

    synchronized long lockedFor(String key, long now) {
      long[] entry = current(key, now);
      return entry != null && entry[0] >= maxFailures ? windowNanos - (now - entry[1]) : 0;
    }

    synchronized void failed(String key, long now) {
      long[] entry = current(key, now);
      if (entry == null) {
        entries.put(key, new long[] {1, now});
      } else {
        entry[0]++;
      }
    }

    synchronized void clear(String key) {
      entries.remove(key);
    }

    synchronized int size() {
      return entries.size();
    }

    /** The live entry of {@code key}; null if it has none or its window passed (then dropped). */
    private long @Nullable [] current(String key, long now) {
      long[] entry = entries.get(key);
      if (entry != null && now - entry[1] >= windowNanos) {
        entries.remove(key);
        return null;
      }
      return entry;
    }
  }
}
