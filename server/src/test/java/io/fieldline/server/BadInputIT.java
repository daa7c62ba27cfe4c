package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3ConnAckException;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import io.fieldline.common.device.Device;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every bad input gets the documented reaction (docs/mqtt-api.md), and a bystander device keeps
 * publishing through all of them.
 */
class BadInputIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();

  private Mqtt3BlockingClient bystander;
  private Device bystanderDevice;
  private int bystanderMessages;

  @BeforeEach
  void connectBystander() {
    if (bystanderDevice == null) {
      bystanderDevice = createDevice("bystander", "bystander-token");
    }
    bystander = client("bystander");
    bystander.connectWith().simpleAuth().username("bystander-token").applySimpleAuth().send();
  }

  @AfterEach
  void bystanderStillServed() {
    // The bystander's connection survived the other client's misbehaviour and is still acked.
    bystander
        .publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(
            ("{\"ts\":" + (1_700_000_000_000L + bystanderMessages++) + ",\"values\":{\"ok\":1}}")
                .getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(rows(bystanderDevice)).isEqualTo(bystanderMessages);
    bystander.disconnect();
  }

  @Test
  void should_refuse_with_0x05_when_token_is_unknown() {
    assertThatThrownBy(
            () ->
                client("intruder")
                    .connectWith()
                    .simpleAuth()
                    .username("no-such-token")
                    .applySimpleAuth()
                    .send())
        .isInstanceOfSatisfying(
            Mqtt3ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReturnCode())
                    .isEqualTo(Mqtt3ConnAckReturnCode.NOT_AUTHORIZED));
  }

  @Test
  void should_refuse_with_0x04_when_username_is_empty() {
    assertThatThrownBy(() -> client("anonymous").connect())
        .isInstanceOfSatisfying(
            Mqtt3ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReturnCode())
                    .isEqualTo(Mqtt3ConnAckReturnCode.BAD_USER_NAME_OR_PASSWORD));
  }

  @Test
  void should_close_only_that_connection_when_packet_is_oversized() {
    createDevice("big-sender", "big-sender-token");
    Mqtt3BlockingClient big = client("big-sender");
    big.connectWith().simpleAuth().username("big-sender-token").applySimpleAuth().send();
    byte[] huge = new byte[70 * 1024];
    assertThatThrownBy(
            () ->
                big.publishWith()
                    .topic("v1/devices/me/telemetry")
                    .qos(MqttQos.AT_LEAST_ONCE)
                    .payload(huge)
                    .send())
        .isInstanceOf(RuntimeException.class);
    assertThat(metric("fieldline_mqtt_rejected_total{reason=\"too_large\""))
        .isGreaterThanOrEqualTo(1);
  }

  @Test
  void should_close_only_that_connection_when_bytes_are_malformed() throws Exception {
    double before = metric("fieldline_mqtt_rejected_total{reason=\"malformed\"");
    try (Socket socket = new Socket("127.0.0.1", mqttPort())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      // Packet type 0 is reserved (MQTT 3.1.1 §2.2.1): not a valid first byte.
      out.write(new byte[] {0x00, 0x02, 0x00, 0x00});
      out.flush();
      InputStream in = socket.getInputStream();
      assertThat(readUntilClosed(in))
          .as("server closes the connection without answering")
          .isEqualTo(-1);
    }
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(metric("fieldline_mqtt_rejected_total{reason=\"malformed\""))
                    .isGreaterThan(before));
  }

  @Test
  void should_ack_dead_letter_and_keep_the_connection_when_topic_is_unknown() throws Exception {
    Device device = createDevice("lost-device", "lost-device-token");
    Mqtt3BlockingClient lost = client("lost-device");
    lost.connectWith().simpleAuth().username("lost-device-token").applySimpleAuth().send();
    double before = metric("fieldline_mqtt_rejected_total{reason=\"topic\"");
    // ThingsBoard 4.x acknowledges these; each send returns only when its PUBACK arrived.
    for (String topic : List.of("some/other/topic", "v1/gateway/telemetry", "v2/fw/request/0")) {
      lost.publishWith()
          .topic(topic)
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload("{\"t\":1}".getBytes(StandardCharsets.UTF_8))
          .send();
    }

    JsonNode letters =
        JSON.readTree(get("/api/fieldline/deadletters/DEVICE/" + device.id(), login()).body());
    assertThat(letters)
        .extracting(letter -> letter.get("topic").asText())
        .containsExactlyInAnyOrder("some/other/topic", "v1/gateway/telemetry", "v2/fw/request/0");
    assertThat(letters)
        .allSatisfy(
            letter -> {
              assertThat(letter.get("payloadText").asText()).isEqualTo("{\"t\":1}");
              assertThat(letter.get("reason").asText()).contains("unknown topic");
            });
    assertThat(metric("fieldline_mqtt_rejected_total{reason=\"topic\"")).isEqualTo(before + 3);
    // Still connected: the next telemetry is stored.
    lost.publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload("{\"temperature\": 20}".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(rows(device)).isEqualTo(1);
    lost.disconnect();
  }

  @Test
  void should_ack_and_dead_letter_when_json_is_invalid() throws Exception {
    Device device = createDevice("poet", "poet-token");
    Mqtt3BlockingClient poet = client("poet");
    poet.connectWith().simpleAuth().username("poet-token").applySimpleAuth().send();
    // Returns only when the PUBACK arrived, i.e. after the dead letter was stored.
    poet.publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload("{\"temperature\": 21.5,".getBytes(StandardCharsets.UTF_8))
        .send();
    String token = login();
    JsonNode letters =
        JSON.readTree(get("/api/fieldline/deadletters/DEVICE/" + device.id(), token).body());
    assertThat(letters).hasSize(1);
    assertThat(letters.get(0).get("topic").asText()).isEqualTo("v1/devices/me/telemetry");
    assertThat(letters.get(0).get("payloadText").asText()).isEqualTo("{\"temperature\": 21.5,");
    assertThat(letters.get(0).get("reason").asText()).contains("JSON");
    // The connection stays usable after the poison message.
    poet.publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload("{\"temperature\": 21.5}".getBytes(StandardCharsets.UTF_8))
        .send();
    assertThat(rows(device)).isEqualTo(1);
    poet.disconnect();
  }

  private String login() throws Exception {
    String body = "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}";
    return JSON.readTree(post("/api/auth/login", null, body).body()).get("token").asText();
  }
}
