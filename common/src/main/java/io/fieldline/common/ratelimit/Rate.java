package io.fieldline.common.ratelimit;

import java.time.Duration;

/**
 * A token bucket's shape: {@code burst} tokens at most, one regained every {@code refill}, regained
 * continuously (a token half-regained after half a refill), as the generic cell rate algorithm
 * counts.
 *
 * @param burst tokens the bucket holds when full (at least 1)
 * @param refill time in which one token is regained (positive)
 */
public record Rate(long burst, Duration refill) {

  public Rate {
    if (burst < 1) {
      throw new IllegalArgumentException("burst must be at least 1: " + burst);
    }
    if (refill.isNegative() || refill.isZero()) {
      throw new IllegalArgumentException("refill must be positive: " + refill);
    }
  }

  /**
   * {@code perSecond} tokens a second, {@code burst} at once. One token every {@code 1 s /
   * perSecond}, in whole nanoseconds (as the limits counted before they used Bucket4j).
   */
  public static Rate perSecond(double perSecond, long burst) {
    if (!(perSecond > 0)) {
      throw new IllegalArgumentException("rate must be positive: " + perSecond);
    }
    return new Rate(burst, Duration.ofNanos(Math.max(1, (long) (1e9 / perSecond))));
  }
}
