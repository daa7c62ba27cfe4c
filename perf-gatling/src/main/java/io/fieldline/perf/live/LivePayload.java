package io.fieldline.perf.live;

import io.fieldline.perf.mqtt.MessageContext;
import io.fieldline.perf.mqtt.PayloadFactory;
import io.fieldline.perf.telemetry.TelemetryPayload;
import java.nio.charset.StandardCharsets;

/**
 * {@link TelemetryPayload}'s message with Gatling's clock as its timestamp: {@code {"ts":<clock ms
 * as the message is built>,"values":{…}}}, so that the stored point, and every live update carrying
 * it, says when it was published. Messages of watched devices are noted in {@link LiveUpdateStats},
 * with their PUBACK.
 *
 * <p>A device publishes at most one message per millisecond for the timestamps to stay unique (one
 * message in flight, paced at {@code ratePerDevice} ≤ 1000/s). Stateless apart from the stats;
 * called on the connections' event loops.
 */
public final class LivePayload implements PayloadFactory {

  private final TelemetryPayload telemetry;
  private final LiveUpdateStats stats;

  public LivePayload(TelemetryPayload telemetry, LiveUpdateStats stats) {
    this.telemetry = telemetry;
    this.stats = stats;
  }

  @Override
  public byte[] payload(MessageContext message) {
    stats.sent(message.username(), message.clockMillis());
    return telemetry
        .json(message.clockMillis(), message.userId(), message.sequence())
        .getBytes(StandardCharsets.US_ASCII);
  }

  @Override
  public void acked(MessageContext message, long ackClockMillis) {
    stats.acked(message.username(), message.clockMillis(), ackClockMillis);
  }
}
