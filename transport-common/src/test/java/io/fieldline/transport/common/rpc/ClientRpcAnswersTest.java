package io.fieldline.transport.common.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ClientRpcAnswersTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final ClientRpcAnswers rpc = new ClientRpcAnswers(4096, 17, System::currentTimeMillis);

  private JsonNode answer(String request) throws IOException {
    return MAPPER.readTree(rpc.answerPayload(request.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void should_return_configured_limits_when_method_is_get_session_limits() throws IOException {
    JsonNode response = answer("{\"method\":\"getSessionLimits\",\"params\":{}}");

    assertThat(response.get("maxPayloadSize").asInt()).isEqualTo(4096);
    assertThat(response.get("maxInflightMessages").asInt()).isEqualTo(17);
    JsonNode rateLimits = response.get("rateLimits");
    assertThat(rateLimits.isObject()).isTrue();
    assertThat(rateLimits.fieldNames())
        .toIterable()
        .containsExactlyInAnyOrder("messages", "telemetryMessages", "telemetryDataPoints");
    assertThat(response.has("error")).isFalse();
  }

  @Test
  void should_return_current_time_when_method_is_get_current_time() throws IOException {
    long before = System.currentTimeMillis();

    JsonNode response = answer("{\"method\":\"getCurrentTime\"}");

    long after = System.currentTimeMillis();
    assertThat(response.get("currentTime").isIntegralNumber()).isTrue();
    assertThat(response.get("currentTime").asLong()).isBetween(before, after);
  }

  @Test
  void should_return_error_when_method_is_unknown() throws IOException {
    JsonNode response = answer("{\"method\":\"reboot\"}");

    assertThat(response.get("error").asText()).contains("reboot");
    assertThat(response.size()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"not json", "", "[1,2]", "42", "{\"method\":17}", "{\"params\":{}}", "{"})
  void should_return_error_when_request_is_not_a_json_object_with_method(String request)
      throws IOException {
    JsonNode response = answer(request);

    assertThat(response.has("error")).isTrue();
    assertThat(response.size()).isEqualTo(1);
  }
}
