package io.fieldline.transport.mqtt.publish;

import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.telemetry;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Client-side RPC answered by the server on the PUBLISH path: the response goes out at once, ahead
 * of acknowledgements still waiting for storage. Driven through the production pipeline in an
 * EmbeddedChannel.
 */
class SessionClientRpcTest extends SessionHandlerTestBase {

  private final ObjectMapper mapper = new ObjectMapper();

  @Test
  void should_answer_get_session_limits_on_response_topic() throws Exception {
    SessionFixture fixture =
        fixture("max-packet-size = 2048", "max-inflight = 7", "inflight-low-water = 1");
    SessionClient client = connected(fixture);

    client.send(
        publish(
            "v1/devices/me/rpc/request/42",
            MqttQoS.AT_LEAST_ONCE,
            11,
            "{\"method\":\"getSessionLimits\",\"params\":{}}"));

    List<String> received = client.received();
    assertThat(received).hasSize(2);
    assertThat(received.get(0)).startsWith("PUBLISH v1/devices/me/rpc/response/42 ");
    JsonNode response =
        mapper.readTree(
            received.get(0).substring("PUBLISH v1/devices/me/rpc/response/42 ".length()));
    assertThat(response.get("maxPayloadSize").asInt()).isEqualTo(2048);
    assertThat(response.get("maxInflightMessages").asInt()).isEqualTo(7);
    assertThat(response.get("rateLimits").isObject()).isTrue();
    assertThat(received.get(1)).isEqualTo("PUBACK 11");
    assertThat(fixture.gateway.submissions()).isEmpty();
  }

  @Test
  void should_answer_rpc_at_once_when_earlier_publish_is_still_pending() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);
    client.send(telemetry(1));

    client.send(
        publish(
            "v1/devices/me/rpc/request/5",
            MqttQoS.AT_MOST_ONCE,
            0,
            "{\"method\":\"getCurrentTime\"}"));

    assertThat(client.received())
        .singleElement()
        .asString()
        .startsWith("PUBLISH v1/devices/me/rpc/response/5 {\"currentTime\":");
  }

  @Test
  void should_answer_every_request_and_pace_reading_when_requests_exceed_the_rate() {
    SessionFixture fixture = fixture("client-rpc-rate = 1", "client-rpc-burst = 2");
    SessionClient client = connected(fixture);
    MqttMessage[] requests = new MqttMessage[5];
    for (int i = 0; i < requests.length; i++) {
      requests[i] =
          publish(
              "v1/devices/me/rpc/request/" + i,
              MqttQoS.AT_MOST_ONCE,
              0,
              "{\"method\":\"getCurrentTime\"}");
    }

    client.send(requests);

    // The burst is answered at once; then one request per second of the rate.
    assertThat(client.received()).hasSize(2);
    assertThat(client.isReading()).isFalse();
    assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "rpc_rate"))
        .isEqualTo(1);
    client.advanceTime(1_000);
    assertThat(client.received()).hasSize(1);
    client.advanceTime(1_000);
    assertThat(client.received()).hasSize(1);
    client.advanceTime(1_000);
    assertThat(client.received())
        .singleElement()
        .asString()
        .startsWith("PUBLISH v1/devices/me/rpc/response/4 ");
    client.advanceTime(1_000);
    assertThat(client.isReading()).isTrue();
    assertThat(client.isOpen()).isTrue();
  }
}
