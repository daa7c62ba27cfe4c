package io.fieldline.perf.telemetry;

import io.fieldline.perf.mqtt.MessageContext;
import io.fieldline.perf.mqtt.PayloadFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * ThingsBoard telemetry with the device's own timestamp, about 100 bytes: {@code
 * {"ts":1763791234567,"values":{"temperature":21.53,"humidity":43.7,"pressure":1013.2,"battery":87}}}.
 *
 * <p>Every message carries the same {@code keys} (3 to 5), so a stored message is exactly {@code
 * keys} rows of {@code ts_kv} with {@code ts = deviceTs}; values vary with the user and sequence
 * (doubles and one long) so that nothing compresses to a constant. Stateless and thread-safe.
 */
public final class TelemetryPayload implements PayloadFactory {

  /** Key names in order; a payload with {@code k} keys uses the first {@code k}. */
  public static final List<String> KEYS =
      List.of("temperature", "humidity", "pressure", "battery", "rssi");

  private final int keys;

  public TelemetryPayload(int keys) {
    if (keys < 1 || keys > KEYS.size()) {
      throw new IllegalArgumentException("keys must be 1.." + KEYS.size() + ": " + keys);
    }
    this.keys = keys;
  }

  /** Number of keys per message. */
  public int keys() {
    return keys;
  }

  @Override
  public byte[] payload(MessageContext message) {
    return json(message.deviceTs(), message.userId(), message.sequence())
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** The JSON text of one message. */
  public String json(long ts, long userId, long sequence) {
    long mix = userId * 31 + sequence;
    StringBuilder out = new StringBuilder(128);
    out.append("{\"ts\":").append(ts).append(",\"values\":{");
    for (int i = 0; i < keys; i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append('"').append(KEYS.get(i)).append("\":");
      switch (i) {
        case 0 -> decimal(out, 1500 + mix % 1500, 100); // 15.00 .. 29.99 °C
        case 1 -> decimal(out, 300 + mix % 500, 10); // 30.0 .. 79.9 %
        case 2 -> decimal(out, 9800 + mix % 500, 10); // 980.0 .. 1029.9 hPa
        case 3 -> out.append(100 - mix % 100); // battery %, a long
        default -> out.append(-40 - mix % 60); // rssi dBm, a long
      }
    }
    return out.append("}}").toString();
  }

  /** Appends {@code value / scale} with a fraction, so ThingsBoard parsing makes it a double. */
  private static void decimal(StringBuilder out, long value, int scale) {
    out.append(value / scale).append('.');
    long fraction = value % scale;
    if (scale == 100 && fraction < 10) {
      out.append('0');
    }
    out.append(fraction);
  }
}
