package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fieldline.common.device.Device;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Attributes between REST and a device: shared attributes set and deleted over REST pushed to a
 * subscribed device (Eclipse Paho, MQTT 3.1.1; HiveMQ client, MQTT 5), in order and once, and the
 * device's attribute requests answered in ThingsBoard's forms.
 */
class SharedAttributesIT extends RestTestBase {

  private static final String ATTRIBUTES = "v1/devices/me/attributes";

  private Device device() {
    String name = "attr-" + UUID.randomUUID();
    return createDevice(name, name);
  }

  private String attributes(Device device) {
    return "/api/plugins/telemetry/DEVICE/" + device.id();
  }

  private static JsonNode parse(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void sharedAttributesSetAndDeletedOverRestArePushedInOrderOnce() throws Exception {
    Device device = device();
    try (PahoDevice subscribed =
            new PahoDevice(mqttPort(), device.accessToken(), true).subscribe(ATTRIBUTES, 1);
        PahoDevice other =
            new PahoDevice(mqttPort(), device().accessToken(), true).subscribe(ATTRIBUTES, 1)) {
      assertThat(
              post(
                      attributes(device) + "/attributes/SHARED_SCOPE",
                      token,
                      "{\"fw\":\"1.2.0\",\"cfg\":{\"period\":30}}")
                  .statusCode())
          .isEqualTo(200);
      assertThat(post(attributes(device) + "/SHARED_SCOPE", token, "{\"period\":60}").statusCode())
          .isEqualTo(200);
      assertThat(delete(attributes(device) + "/SHARED_SCOPE?keys=fw").statusCode()).isEqualTo(200);
      // Server-side attributes are not the device's business.
      assertThat(
              post(attributes(device) + "/attributes/SERVER_SCOPE", token, "{\"secret\":1}")
                  .statusCode())
          .isEqualTo(200);

      await().atMost(Duration.ofSeconds(5)).until(() -> subscribed.on(ATTRIBUTES).size() >= 3);
      List<PahoDevice.Received> pushes = subscribed.on(ATTRIBUTES);
      assertThat(pushes).hasSize(3);
      assertThat(parse(pushes.get(0).payload()))
          .isEqualTo(parse("{\"fw\":\"1.2.0\",\"cfg\":{\"period\":30}}"));
      assertThat(parse(pushes.get(1).payload())).isEqualTo(parse("{\"period\":60}"));
      assertThat(parse(pushes.get(2).payload())).isEqualTo(parse("{\"deleted\":[\"fw\"]}"));
      assertThat(other.on(ATTRIBUTES)).isEmpty();
    }
  }

  @Test
  void attributeRequestsAreAnsweredInEachForm() throws Exception {
    Device device = device();
    post(
        attributes(device) + "/attributes/SHARED_SCOPE",
        token,
        "{\"target\":21.5,\"mode\":\"eco\"}");
    try (PahoDevice paho = new PahoDevice(mqttPort(), device.accessToken(), true)) {
      paho.subscribe("v1/devices/me/attributes/response/+", 1);
      paho.publish(ATTRIBUTES, "{\"serial\":\"A-1\",\"battery\":97}");

      paho.publish(
          ATTRIBUTES + "/request/1", "{\"clientKeys\":\"serial\",\"sharedKeys\":\"target,mode\"}");
      paho.publish(ATTRIBUTES + "/request/2", "{\"sharedKeys\":\"mode\"}");
      paho.publish(ATTRIBUTES + "/request/3", "{}");

      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> paho.on(ATTRIBUTES + "/response/").size() == 3);
      assertThat(parse(paho.on(ATTRIBUTES + "/response/1").get(0).payload()))
          .isEqualTo(
              parse(
                  "{\"client\":{\"serial\":\"A-1\"},\"shared\":{\"target\":21.5,\"mode\":\"eco\"}}"));
      assertThat(parse(paho.on(ATTRIBUTES + "/response/2").get(0).payload()))
          .isEqualTo(parse("{\"shared\":{\"mode\":\"eco\"}}"));
      assertThat(parse(paho.on(ATTRIBUTES + "/response/3").get(0).payload()))
          .isEqualTo(
              parse(
                  "{\"client\":{\"serial\":\"A-1\",\"battery\":97},"
                      + "\"shared\":{\"target\":21.5,\"mode\":\"eco\"}}"));
    }
  }

  @Test
  void anMqtt5DeviceGetsPushesToo() throws Exception {
    Device device = device();
    Mqtt5BlockingClient client =
        Mqtt5Client.builder()
            .identifier("v5-" + device.name())
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username(device.accessToken())
            .applySimpleAuth()
            .buildBlocking();
    client.connect();
    try (Mqtt5BlockingClient.Mqtt5Publishes publishes =
        client.publishes(MqttGlobalPublishFilter.SUBSCRIBED)) {
      client.subscribeWith().topicFilter(ATTRIBUTES).qos(MqttQos.AT_LEAST_ONCE).send();
      post(attributes(device) + "/attributes/SHARED_SCOPE", token, "{\"led\":true}");

      Optional<Mqtt5Publish> push = publishes.receive(5, TimeUnit.SECONDS);
      assertThat(push).isPresent();
      assertThat(push.get().getTopic().toString()).isEqualTo(ATTRIBUTES);
      assertThat(parse(new String(push.get().getPayloadAsBytes(), StandardCharsets.UTF_8)))
          .isEqualTo(parse("{\"led\":true}"));
    } finally {
      client.disconnect();
    }
  }
}
