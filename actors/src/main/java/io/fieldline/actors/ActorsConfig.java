package io.fieldline.actors;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.time.Duration;

/**
 * The device actors' settings, read once from {@code fieldline.actors} (see this module's {@code
 * reference.conf} for each key's meaning and environment variable). Immutable.
 *
 * @param shards number of {@code DeviceShard} routing actors
 * @param ackTimeout longest wait for a submitted message's outcome
 * @param maxInflightWrites writes one device actor may have in flight at once
 * @param stashCapacity messages one device actor keeps waiting before it rejects as overloaded
 * @param passivateAfter idle time after which a device actor stops (checked every half of it, so it
 *     stops after between one and 1.5 times it)
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
    ConfigReader r = ConfigReader.of(root, PATH);
    // Upper bounds catch unit mistakes (a byte count or milliseconds pasted as a count).
    return r.validated(
        new ActorsConfig(
            r.integer("shards", 1, 1024),
            r.positiveDuration("ack-timeout"),
            r.integer("max-inflight-writes", 1, 65_536),
            r.integer("stash-capacity", 1, 1_048_576),
            r.positiveDuration("passivate-after"),
            r.positiveDuration("shutdown-timeout")));
  }

  /** A copy with other in-flight and stash bounds (tests, tuning). */
  public ActorsConfig withBounds(int inflight, int stash) {
    return new ActorsConfig(shards, ackTimeout, inflight, stash, passivateAfter, shutdownTimeout);
  }
}
