package io.fieldline.transport.common.pacing;

import java.time.Duration;

/**
 * Paces one client's requests to a rate with a burst, as the generic cell rate algorithm does: each
 * request moves a theoretical arrival time one interval ahead; {@code burst} requests at once fit.
 * The one implementation of the per-device rate budgets of both device transports, used two ways:
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
 * <p>Not thread-safe: confined to the connection's event loop (MQTT), or touched only inside the
 * {@code compute} of its device's entry (HTTP).
 */
public final class RequestPacer {

  private final long intervalNanos;
  private final long toleranceNanos;
  private long theoreticalArrival;

  /**
   * @param perSecond requests per second; 0 = no pacing
   * @param burst requests allowed at once on top of the rate (at least 1)
   * @param nowNanos the current time of the clock later calls use (nanoseconds)
   */
  public RequestPacer(int perSecond, int burst, long nowNanos) {
    this.intervalNanos = perSecond == 0 ? 0 : 1_000_000_000L / perSecond;
    this.toleranceNanos = intervalNanos * (burst - 1);
    this.theoreticalArrival = nowNanos;
  }

  /**
   * Counts one request arriving at {@code nowNanos}; returns how long to wait before the next one
   * (zero while within rate and burst).
   */
  public Duration delayAfter(long nowNanos) {
    if (intervalNanos == 0) {
      return Duration.ZERO;
    }
    theoreticalArrival = Math.max(theoreticalArrival, nowNanos) + intervalNanos;
    long ahead = theoreticalArrival - nowNanos - toleranceNanos;
    return ahead > 0 ? Duration.ofNanos(ahead) : Duration.ZERO;
  }

  /**
   * Takes one request arriving at {@code nowNanos} if rate and burst allow it.
   *
   * @return zero when it was taken (and counted), else how long until one would be (not counted)
   */
  public Duration admit(long nowNanos) {
    if (intervalNanos == 0) {
      return Duration.ZERO;
    }
    long arrival = theoreticalArrival - nowNanos < 0 ? nowNanos : theoreticalArrival;
    long ahead = arrival - nowNanos - toleranceNanos;
    if (ahead > 0) {
      return Duration.ofNanos(ahead);
    }
    theoreticalArrival = arrival + intervalNanos;
    return Duration.ZERO;
  }

  /** True when the budget is full again at {@code nowNanos}: forgetting it would change nothing. */
  public boolean idle(long nowNanos) {
    return theoreticalArrival - nowNanos <= 0;
  }
}
