package io.fieldline.transport.common.pacing;

import io.fieldline.common.ratelimit.Rate;
import io.fieldline.common.ratelimit.TokenBuckets;
import io.github.bucket4j.Bucket;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Paces one client's requests to a rate with a burst: a token bucket ({@code common.ratelimit},
 * Bucket4j) of {@code burst} tokens, one regained every {@code 1 s / perSecond}, as the generic
 * cell rate algorithm counts. The one implementation of the per-device rate budgets of both device
 * transports, used two ways:
 *
 * <ul>
 *   <li>{@link #delayAfter} (MQTT): every request is counted, and the one that takes the last of
 *       the burst makes the connection wait until the rate allows the next. The caller pauses
 *       reading for that long instead of refusing the request, so nothing is dropped and a client
 *       that keeps to the rate never notices.
 *   <li>{@link #admit} (HTTP): a request beyond rate and burst is not counted but refused with the
 *       wait until one would fit (a 429 with {@code Retry-After}), which is how HTTP clients expect
 *       to be slowed down.
 * </ul>
 *
 * <p>Time is the caller's: each call passes the request's arrival on the nano clock, which the
 * bucket reads through its time meter. Not thread-safe: confined to the connection's event loop
 * (MQTT), or touched only inside the {@code compute} of its device's entry (HTTP).
 */
public final class RequestPacer {

  private final long burst;
  // Null when there is no pacing (a rate of 0).
  private final @Nullable Bucket bucket;
  private long now;

  /**
   * @param perSecond requests per second; 0 = no pacing
   * @param burst requests allowed at once on top of the rate (at least 1)
   * @param nowNanos the current time of the clock later calls use (nanoseconds)
   */
  public RequestPacer(int perSecond, int burst, long nowNanos) {
    this.burst = burst;
    this.now = nowNanos;
    this.bucket =
        perSecond == 0
            ? null
            : TokenBuckets.confined(
                new Rate(burst, Duration.ofNanos(1_000_000_000L / perSecond)), () -> now);
  }

  /**
   * Counts one request arriving at {@code nowNanos}; returns how long to wait before the next one
   * (zero while within rate and burst).
   */
  public Duration delayAfter(long nowNanos) {
    if (bucket == null) {
      return Duration.ZERO;
    }
    now = nowNanos;
    bucket.consumeIgnoringRateLimits(1);
    long wait = TokenBuckets.nanosUntilOne(bucket);
    return wait > 0 ? Duration.ofNanos(wait) : Duration.ZERO;
  }

  /**
   * Takes one request arriving at {@code nowNanos} if rate and burst allow it.
   *
   * @return zero when it was taken (and counted), else how long until one would be (not counted)
   */
  public Duration admit(long nowNanos) {
    if (bucket == null) {
      return Duration.ZERO;
    }
    now = nowNanos;
    long wait = bucket.tryConsumeAndReturnRemaining(1).getNanosToWaitForRefill();
    return wait > 0 ? Duration.ofNanos(wait) : Duration.ZERO;
  }

  /** True when the budget is full again at {@code nowNanos}: forgetting it would change nothing. */
  public boolean idle(long nowNanos) {
    if (bucket == null) {
      return true;
    }
    now = nowNanos;
    return bucket.getAvailableTokens() >= burst;
  }
}
