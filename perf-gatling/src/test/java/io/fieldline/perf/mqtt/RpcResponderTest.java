package io.fieldline.perf.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RpcResponderTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void should_answer_on_the_response_topic_of_the_same_id_with_the_request_echoed()
      throws Exception {
    byte[] request =
        "{\"method\":\"echo\",\"params\":{\"seq\":42}}".getBytes(StandardCharsets.UTF_8);

    RpcResponder.Answer answer = RpcResponder.answer("v1/devices/me/rpc/request/7", request);

    assertThat(answer).isNotNull();
    assertThat(answer.topic()).isEqualTo("v1/devices/me/rpc/response/7");
    JsonNode body = JSON.readTree(answer.payload());
    assertThat(body.path("ok").asBoolean()).isTrue();
    assertThat(body.path("n").asLong()).isEqualTo(7);
    assertThat(body.path("request").path("method").asText()).isEqualTo("echo");
    assertThat(body.path("request").path("params").path("seq").asLong()).isEqualTo(42);
  }

  @Test
  void should_answer_null_as_the_request_when_the_request_is_empty() throws Exception {
    RpcResponder.Answer answer =
        RpcResponder.answer("v1/devices/me/rpc/request/2147483647", new byte[0]);

    assertThat(answer).isNotNull();
    assertThat(answer.topic()).isEqualTo("v1/devices/me/rpc/response/2147483647");
    JsonNode body = JSON.readTree(answer.payload());
    assertThat(body.path("n").asLong()).isEqualTo(2147483647L);
    assertThat(body.get("request").isNull()).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "v1/devices/me/rpc/request/",
        "v1/devices/me/rpc/request/abc",
        "v1/devices/me/rpc/request/1/2",
        "v1/devices/me/rpc/request/-1",
        "v1/devices/me/rpc/request/12345678901"
      })
  void should_not_answer_when_the_topic_holds_no_request_id(String topic) {
    assertThat(RpcResponder.isRequest(topic)).isTrue();
    assertThat(RpcResponder.answer(topic, "{}".getBytes(StandardCharsets.UTF_8))).isNull();
  }

  @Test
  void should_leave_other_topics_to_await_message() {
    assertThat(RpcResponder.isRequest("v1/devices/me/attributes")).isFalse();
    assertThat(RpcResponder.answer("v1/devices/me/attributes", new byte[] {'{', '}'})).isNull();
  }

  @Test
  void should_refuse_an_answer_qos_other_than_0_or_1() {
    assertThatThrownBy(() -> MqttDsl.mqtt("rpc").respondToRpc().qos(2))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("0 or 1");
  }
}
