package io.fieldline.transport.mqtt.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.fieldline.transport.mqtt.publish.DeviceTopic.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DeviceTopicTest {

  @Test
  void should_parse_telemetry_when_topic_is_exact() {
    assertThat(DeviceTopic.parse("v1/devices/me/telemetry"))
        .isEqualTo(new DeviceTopic(Kind.TELEMETRY, ""));
  }

  @Test
  void should_parse_attributes_when_topic_is_exact() {
    assertThat(DeviceTopic.parse("v1/devices/me/attributes"))
        .isEqualTo(new DeviceTopic(Kind.ATTRIBUTES, ""));
  }

  @ParameterizedTest
  @CsvSource({
    "v1/devices/me/rpc/request/42, RPC_REQUEST, 42",
    "v1/devices/me/rpc/response/7, RPC_RESPONSE, 7",
    "v1/devices/me/attributes/request/abc, ATTRIBUTES_REQUEST, abc"
  })
  void should_extract_request_id_when_topic_has_id(String topic, Kind kind, String id) {
    assertThat(DeviceTopic.parse(topic)).isEqualTo(new DeviceTopic(kind, id));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "v1/devices/me/telemetry/",
        "v1/devices/me/telemetryx",
        "V1/devices/me/telemetry",
        "/v1/devices/me/telemetry",
        "v1/devices/me/rpc/request/",
        "v1/devices/me/rpc/request/1/2",
        "v1/devices/me/attributes/response/1",
        "v1/devices/me/attributes/request/",
        "v1/gateway/rpc",
        "v1/gateway/attributes/request",
        "v1/gateway/telemetry/",
        "v1/gateway/"
      })
  void should_be_unknown_when_topic_is_outside_device_api(String topic) {
    assertThat(DeviceTopic.parse(topic).kind()).isEqualTo(Kind.UNKNOWN);
  }

  @ParameterizedTest
  @CsvSource({
    "v1/gateway/connect, GATEWAY_CONNECT",
    "v1/gateway/disconnect, GATEWAY_DISCONNECT",
    "v1/gateway/telemetry, GATEWAY_TELEMETRY",
    "v1/gateway/attributes, GATEWAY_ATTRIBUTES"
  })
  void should_recognise_the_gateway_topics_when_a_gateway_publishes(String topic, Kind kind) {
    assertThat(DeviceTopic.parse(topic)).isEqualTo(new DeviceTopic(kind, ""));
    assertThat(kind.isGateway()).isTrue();
  }

  @Test
  void should_reject_null_components_when_constructed() {
    assertThatNullPointerException().isThrownBy(() -> new DeviceTopic(null, ""));
    assertThatNullPointerException().isThrownBy(() -> new DeviceTopic(Kind.TELEMETRY, null));
  }
}
