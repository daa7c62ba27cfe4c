package io.fieldline.perf.telemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.perf.mqtt.MessageContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GatewayPayloadTest {

  private static final long TS = 1_763_791_234_567L;
  private final ObjectMapper json = new ObjectMapper();

  private static MessageContext message(String token, long userId, long sequence) {
    return new MessageContext(userId, sequence, TS + sequence, token, 0);
  }

  @Test
  void should_carry_one_point_per_child_with_the_message_timestamp_when_built() throws Exception {
    GatewayPayload payload = new GatewayPayload(4, 3, Map.of("tok-7", "gw-7"));

    JsonNode message = json.readTree(payload.payload(message("tok-7", 7, 2)));

    List<String> names = new ArrayList<>();
    message.fieldNames().forEachRemaining(names::add);
    assertThat(names).containsExactly("gw-7-child-0", "gw-7-child-1", "gw-7-child-2");
    for (JsonNode points : message) {
      assertThat(points.isArray()).isTrue();
      assertThat(points.size()).isEqualTo(1);
      assertThat(points.get(0).path("ts").asLong()).isEqualTo(TS + 2);
      assertThat(points.get(0).path("values").size()).isEqualTo(4);
    }
  }

  @Test
  void should_vary_values_between_children_of_one_message() throws Exception {
    JsonNode message =
        json.readTree(new GatewayPayload(3, 2, Map.of()).payload(message("t", 0, 0)));

    assertThat(message.path("t-child-0").get(0).path("values"))
        .isNotEqualTo(message.path("t-child-1").get(0).path("values"));
  }

  @Test
  void should_name_a_gateways_children_by_its_token_when_the_token_has_no_name() throws Exception {
    JsonNode message =
        json.readTree(new GatewayPayload(3, 1, Map.of("a", "gw-a")).payload(message("b", 1, 0)));

    assertThat(message.has("b-child-0")).isTrue();
  }

  @Test
  void should_escape_a_gateway_name_that_json_must_quote() throws Exception {
    JsonNode message =
        json.readTree(
            new GatewayPayload(3, 1, Map.of("t", "yard \"north\"")).payload(message("t", 1, 0)));

    assertThat(message.has("yard \"north\"-child-0")).isTrue();
  }

  @Test
  void should_be_about_120_bytes_per_child_when_points_have_4_keys() {
    byte[] bytes =
        new GatewayPayload(4, 100, Map.of("t", "bench-gw-49")).payload(message("t", 49, 1000));

    assertThat(bytes.length).isBetween(100 * 100, 100 * 140);
  }

  @Test
  void should_refuse_when_a_message_would_carry_no_child() {
    assertThatThrownBy(() -> new GatewayPayload(4, 0, Map.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
