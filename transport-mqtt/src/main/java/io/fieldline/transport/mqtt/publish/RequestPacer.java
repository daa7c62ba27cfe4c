package io.fieldline.transport.mqtt.publish;

import java.time.Duration;

/**
 * Paces one connection's requests to a rate with a burst, as the generic cell rate algorithm does:
 * each request moves a theoretical arrival time one interval ahead; {@code burst} requests at once
 * fit, and the one that takes the last of the burst makes the connection wait until the rate allows
 * the next. The caller pauses reading for that long instead of refusing the request, so nothing is
 * dropped and a client that keeps to the rate never notices.
 *
 * <p>Confined to the connection's event loop.
 */
final class RequestPacer {

  private final long intervalNanos;
  private final long toleranceNanos;
  private long theoreticalArrival;

  /**
   * @param perSecond requests per second; 0 = no pacing
   * @param burst requests allowed at once on top of the rate (at least 1)
   * @param nowNanos the current time of the clock later calls use (nanoseconds)
   */
  RequestPacer(int perSecond, int burst, long nowNanos) {
    this.intervalNanos = perSecond == 0 ? 0 : 1_000_000_000L / perSecond;
    this.toleranceNanos = intervalNanos * (burst - 1);
    this.theoreticalArrival = nowNanos;
  }

  /**
   * Counts one request arriving at {@code nowNanos}; returns how long to wait before the next one
   * (zero while within rate and burst).
   */
  Duration delayAfter(long nowNanos) {
    if (intervalNanos == 0) {
      return Duration.ZERO;
    }
    theoreticalArrival = Math.max(theoreticalArrival, nowNanos) + intervalNanos;
    long ahead = theoreticalArrival - nowNanos - toleranceNanos;
    return ahead > 0 ? Duration.ofNanos(ahead) : Duration.ZERO;
  }
}
