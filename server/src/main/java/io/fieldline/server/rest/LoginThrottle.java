package io.fieldline.server.rest;

import io.fieldline.common.ratelimit.FailureWindows;
import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Counts failed logins per user name and per source address in a fixed window that starts at the
 * first failure; once either count reaches its maximum, logins for that name or from that address
 * are refused until the window ends. Two {@link FailureWindows} ({@code common.ratelimit}, bounded
 * Caffeine tables): each keeps at most {@code maxTracked} entries, each only until its window ends,
 * so a flood of names or addresses cannot grow the heap; keys are truncated to {@link
 * #MAX_KEY_LENGTH} characters.
 *
 * <p>Thread-safe: called from Pekko dispatcher threads.
 */
final class LoginThrottle {

  static final int MAX_KEY_LENGTH = 128;

  private final FailureWindows<String> users;
  private final FailureWindows<String> addresses;

  LoginThrottle(RestConfig config, LongSupplier nanoTime) {
    Duration window = config.loginWindow();
    this.users =
        new FailureWindows<>(
            config.loginMaxFailuresPerUser(), window, config.loginMaxTracked(), nanoTime);
    this.addresses =
        new FailureWindows<>(
            config.loginMaxFailuresPerAddress(), window, config.loginMaxTracked(), nanoTime);
  }

  /** How long the caller must wait, if {@code user} or {@code address} is locked out now. */
  Optional<Duration> retryAfter(String user, String address) {
    long wait = Math.max(users.lockedFor(key(user)), addresses.lockedFor(key(address)));
    return wait > 0 ? Optional.of(Duration.ofNanos(wait)) : Optional.empty();
  }

  void failed(String user, String address) {
    users.failed(key(user));
    addresses.failed(key(address));
  }

  /** A successful login clears its user name's count (not its address's). */
  void succeeded(String user) {
    users.clear(key(user));
  }

  /** Names plus addresses remembered now (for the gauge). */
  int tracked() {
    return users.tracked() + addresses.tracked();
  }

  private static String key(String value) {
    return value.length() <= MAX_KEY_LENGTH ? value : value.substring(0, MAX_KEY_LENGTH);
  }
}
