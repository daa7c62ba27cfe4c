package io.fieldline.actors;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The device actors' settings, read once from {@code fieldline.actors} (see this module's {@code
 * reference.conf} for each key's meaning and environment variable). Immutable.
 *
 * @param shards number of {@code DeviceShard} routing actors
 * @param ackTimeout longest wait for a submitted message's outcome
 * @param maxInflightWrites writes one device actor may have in flight at once
 * @param stashCapacity messages one device actor keeps waiting before it rejects as overloaded
 * @param passivateAfter idle time after which a device actor stops
 * @param shutdownTimeout longest wait for in-flight writes during a graceful shutdown
 */
public record ActorsConfig(
    int shards,
    Duration ackTimeout,
    int maxInflightWrites,
    int stashCapacity,
    Duration passivateAfter,
    Duration shutdownTimeout) {

  /** The path of this module's subtree in the configuration. */
  public static final String PATH = "fieldline.actors";

  /**
   * Reads and validates {@code fieldline.actors} from a resolved root configuration.
   *
   * @throws IllegalArgumentException listing every missing, mistyped or out-of-range key
   */
  public static ActorsConfig from(Config root) {
    List<String> errors = new ArrayList<>();
    Config c;
    try {
      c = root.getConfig(PATH);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(
          "invalid " + PATH + " configuration: " + e.getMessage(), e);
    }
    ActorsConfig config =
        new ActorsConfig(
            read(c, "shards", c::getInt, 0, errors),
            read(c, "ack-timeout", c::getDuration, Duration.ZERO, errors),
            read(c, "max-inflight-writes", c::getInt, 0, errors),
            read(c, "stash-capacity", c::getInt, 0, errors),
            read(c, "passivate-after", c::getDuration, Duration.ZERO, errors),
            read(c, "shutdown-timeout", c::getDuration, Duration.ZERO, errors));
    config.validate(errors);
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid " + PATH + " configuration: " + String.join("; ", errors));
    }
    return config;
  }

  // A key that cannot be read at all is reported once, here; validate() skips it.
  private static <T> T read(
      Config c, String key, Function<String, T> getter, T placeholder, List<String> errors) {
    try {
      return getter.apply(key);
    } catch (ConfigException e) {
      errors.add(key + ": " + e.getMessage());
      return placeholder;
    }
  }

  private void validate(List<String> errors) {
    // Upper bounds catch unit mistakes (a byte count or milliseconds pasted as a count).
    range(errors, "shards", shards, 1, 1024);
    range(errors, "max-inflight-writes", maxInflightWrites, 1, 65_536);
    range(errors, "stash-capacity", stashCapacity, 1, 1_048_576);
    positive(errors, "ack-timeout", ackTimeout);
    positive(errors, "passivate-after", passivateAfter);
    positive(errors, "shutdown-timeout", shutdownTimeout);
  }

  private static void range(List<String> errors, String key, int value, int min, int max) {
    if (!hasError(errors, key) && (value < min || value > max)) {
      errors.add(key + " must be " + min + ".." + max + ", got " + value);
    }
  }

  private static void positive(List<String> errors, String key, Duration value) {
    if (!hasError(errors, key) && (value.isZero() || value.isNegative())) {
      errors.add(key + " must be a positive duration, got " + value);
    }
  }

  private static boolean hasError(List<String> errors, String key) {
    String prefix = key + ": ";
    return errors.stream().anyMatch(e -> e.startsWith(prefix));
  }

  /** A copy with other in-flight and stash bounds (tests, tuning). */
  public ActorsConfig withBounds(int inflight, int stash) {
    return new ActorsConfig(shards, ackTimeout, inflight, stash, passivateAfter, shutdownTimeout);
  }
}
