package io.fieldline.perf.live;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.perf.mqtt.MessageContext;
import io.fieldline.perf.telemetry.TelemetryPayload;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LivePayloadTest {

  private static final long NOW = 1_700_000_000_123L;

  @Test
  void should_stamp_the_message_with_the_clock_and_note_it_when_its_device_is_watched() {
    LiveUpdateStats stats = new LiveUpdateStats().watch(1, "device-a", "token-a");
    LivePayload payload = new LivePayload(new TelemetryPayload(4), stats);
    MessageContext message = new MessageContext(3, 0, 42, "token-a", NOW);

    String json = new String(payload.payload(message), StandardCharsets.US_ASCII);
    payload.acked(message, NOW + 2);
    payload.payload(new MessageContext(4, 0, 42, "token-b", NOW)); // not watched

    assertThat(json).startsWith("{\"ts\":" + NOW + ",\"values\":{\"temperature\":");
    Map<String, Object> all = stats.describe(NOW, Map.of());
    assertThat(all).containsEntry("messagesSent", 1L).containsEntry("messagesAcked", 1L);
  }
}
