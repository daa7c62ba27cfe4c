package io.fieldline.perf.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.perf.mqtt.MessageContext;
import org.junit.jupiter.api.Test;

class TelemetryPayloadTest {

  private final ObjectMapper json = new ObjectMapper();

  @Test
  void should_carry_the_device_timestamp_and_the_first_keys_when_built() throws Exception {
    byte[] bytes = new TelemetryPayload(4).payload(new MessageContext(7, 3, 1_763_791_234_567L));
    JsonNode message = json.readTree(bytes);

    assertThat(message.path("ts").asLong()).isEqualTo(1_763_791_234_567L);
    assertThat(message.path("values").size()).isEqualTo(4);
    assertThat(message.path("values").path("temperature").isDouble()).isTrue();
    assertThat(message.path("values").path("humidity").isDouble()).isTrue();
    assertThat(message.path("values").path("pressure").isDouble()).isTrue();
    assertThat(message.path("values").path("battery").isIntegralNumber()).isTrue();
  }

  @Test
  void should_be_about_100_bytes_when_it_has_3_to_5_keys() {
    for (int keys = 3; keys <= 5; keys++) {
      for (long sequence = 0; sequence < 2000; sequence += 37) {
        byte[] bytes =
            new TelemetryPayload(keys)
                .payload(new MessageContext(sequence, sequence, 1_763_791_234_567L));
        assertThat(bytes.length).isBetween(70, 125);
      }
    }
  }

  @Test
  void should_keep_a_fraction_when_the_value_is_whole() throws Exception {
    // user 0, sequence 0: temperature 15.00, humidity 30.0, pressure 980.0
    String text = new TelemetryPayload(3).json(1, 0, 0);

    assertThat(text).contains("\"temperature\":15.00", "\"humidity\":30.0", "\"pressure\":980.0");
    assertThat(json.readTree(text).path("values").path("temperature").isDouble()).isTrue();
  }

  @Test
  void should_refuse_when_keys_are_out_of_range() {
    assertThatThrownBy(() -> new TelemetryPayload(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new TelemetryPayload(6)).isInstanceOf(IllegalArgumentException.class);
  }
}
