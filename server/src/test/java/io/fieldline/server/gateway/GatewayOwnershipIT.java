package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import com.typesafe.config.ConfigValueFactory;
import io.fieldline.common.device.Device;
import io.fieldline.server.FieldlineServer;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A gateway acts only for the devices it created or an administrator linked to it (issue 32, item
 * 4): against a real server and Cassandra, with the HiveMQ MQTT client (3.1.1 and 5) as the
 * gateway. Another device's name — one created over REST, one another gateway created — is refused
 * for telemetry, attributes, attribute requests, RPC answers and connect, whole and acknowledged as
 * a dead letter (MQTT 5: 0x87 not authorized), and the gateway does not start receiving that
 * device's RPC; an administrator's link lets it act; with {@code adopt-existing-devices} on, a
 * device no gateway owns is adopted and another gateway's child still refused. A bystander device
 * publishes QoS 1 throughout and every acknowledged message of it is stored.
 */
class GatewayOwnershipIT extends GatewayTestBase {

  private static final String TELEMETRY = "v1/gateway/telemetry";
  private static final String NOT_OWNER =
      "fieldline_mqtt_gateway_refused_total{reason=\"not_owner\"";

  private final List<Runnable> cleanups = new ArrayList<>();
  private Device bystander;
  private Mqtt3BlockingClient bystanderClient;
  private long bystanderAcked;

  @BeforeEach
  void connectBystander() {
    if (bystander == null) {
      bystander = createDevice("own-bystander", "own-bystander-token");
    }
    bystanderClient = client("own-bystander");
    bystanderClient
        .connectWith()
        .simpleAuth()
        .username("own-bystander-token")
        .applySimpleAuth()
        .send();
  }

  @AfterEach
  void disconnect() {
    try {
      cleanups.forEach(Runnable::run);
    } finally {
      cleanups.clear();
      bystanderClient.disconnect();
    }
  }

  /** One QoS 1 message of the bystander: acknowledged, and every acknowledged one stored. */
  private void bystanderPublishes() {
    bystanderClient
        .publishWith()
        .topic("v1/devices/me/telemetry")
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(
            ("{\"ts\":" + (1_700_000_000_000L + bystanderAcked) + ",\"values\":{\"ok\":1}}")
                .getBytes(StandardCharsets.UTF_8))
        .send();
    bystanderAcked++;
    assertThat(rows(bystander)).isEqualTo(bystanderAcked);
  }

  private Mqtt3BlockingClient gateway3(String token, int port) {
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("own-" + token + "-" + port)
            .serverHost("127.0.0.1")
            .serverPort(port)
            .simpleAuth()
            .username(token)
            .applySimpleAuth()
            .buildBlocking();
    client.connect();
    cleanups.add(
        () -> {
          if (client.getState().isConnected()) {
            client.disconnect();
          }
        });
    return client;
  }

  private static void publish(Mqtt3BlockingClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  /** The client attributes of {@code device}, by key. */
  private List<String> clientAttributes(UUID device) {
    return ok(get("/api/plugins/telemetry/DEVICE/" + device + "/values/attributes/CLIENT_SCOPE"))
        .findValuesAsText("key");
  }

  private JsonNode info(UUID device) {
    return ok(get("/api/device/" + device)).path("additionalInfo");
  }

  @Test
  void should_refuse_another_devices_name_for_every_message_when_the_gateway_does_not_own_it()
      throws Exception {
    UUID thief = createDevice("own-thief", "own-thief-token", true);
    createDevice("own-other", "own-other-token", true);
    UUID rest = createDevice("own-rest", "own-rest-token", false);
    ok(
        post(
            "/api/plugins/telemetry/DEVICE/" + rest + "/attributes/SHARED_SCOPE",
            "{\"pin\":1234}"));
    // A child another gateway created.
    publish(gateway3("own-other-token", mqttPort()), TELEMETRY, "{\"own-theirs\":{\"t\":1}}");
    UUID theirs = deviceId("own-theirs");
    bystanderPublishes();

    double refused = metric(NOT_OWNER);
    Mqtt3BlockingClient gateway = gateway3("own-thief-token", mqttPort());
    try (Mqtt3BlockingClient.Mqtt3Publishes publishes =
        gateway.publishes(MqttGlobalPublishFilter.ALL)) {
      for (String topic : List.of("v1/gateway/rpc", "v1/gateway/attributes/response")) {
        gateway.subscribeWith().topicFilter(topic).qos(MqttQos.AT_LEAST_ONCE).send();
      }
      for (String victim : List.of("own-rest", "own-theirs")) {
        // Each acknowledged (kept as a dead letter), none acted on: not even the value of the
        // gateway's own new child beside the victim is stored.
        publish(
            gateway, TELEMETRY, "{\"" + victim + "\":{\"stolen\":1},\"own-mine\":{\"stolen\":1}}");
        publish(gateway, "v1/gateway/attributes", "{\"" + victim + "\":{\"stolen\":true}}");
        publish(
            gateway,
            "v1/gateway/attributes/request",
            "{\"id\":1,\"device\":\"" + victim + "\",\"client\":false,\"key\":\"pin\"}");
        publish(gateway, "v1/gateway/rpc", "{\"device\":\"" + victim + "\",\"id\":1,\"data\":{}}");
        publish(gateway, "v1/gateway/connect", "{\"device\":\"" + victim + "\"}");
        bystanderPublishes();
      }
      assertThat(metric(NOT_OWNER) - refused).isEqualTo(10);
      assertThat(ok(get("/api/fieldline/deadletters/DEVICE/" + thief))).hasSize(10);

      // Nothing stored for the victims, nothing linked: their RPC does not reach the gateway.
      assertThat(rows("stolen")).isEmpty();
      assertThat(clientAttributes(rest)).isEmpty();
      assertThat(clientAttributes(theirs)).isEmpty();
      assertThat(info(rest).path("lastConnectedGateway").isMissingNode()).isTrue();
      assertThat(info(theirs).path("ownerGateway").asText()).isNotEqualTo(thief.toString());
      HttpResponse<String> rpc =
          post("/api/rpc/twoway/" + rest, "{\"method\":\"unlock\",\"timeout\":1000}");
      assertThat(rpc.statusCode()).as(rpc.body()).isEqualTo(504);
      Optional<Mqtt3Publish> received = publishes.receive(200, TimeUnit.MILLISECONDS);
      assertThat(received).as("no attribute answer, no RPC of a victim").isEmpty();
    }
    bystanderPublishes();

    Mqtt5BlockingClient five =
        Mqtt5Client.builder()
            .identifier("own-thief5")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username("own-thief-token")
            .applySimpleAuth()
            .buildBlocking();
    five.connect();
    cleanups.add(five::disconnect);
    assertThatThrownBy(
            () ->
                five.publishWith()
                    .topic(TELEMETRY)
                    .qos(MqttQos.AT_LEAST_ONCE)
                    .payload("{\"own-rest\":{\"stolen\":5}}".getBytes(StandardCharsets.UTF_8))
                    .send())
        .isInstanceOfSatisfying(
            Mqtt5PubAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5PubAckReasonCode.NOT_AUTHORIZED));
    assertThat(rows("stolen")).isEmpty();
    bystanderPublishes();
  }

  @Test
  void should_act_for_a_device_created_over_rest_once_an_administrator_links_it() {
    UUID gateway = createDevice("own-linked-gw", "own-linked-gw-token", true);
    UUID device = createDevice("own-linked", "own-linked-token", false);
    Mqtt3BlockingClient client = gateway3("own-linked-gw-token", mqttPort());
    double refused = metric(NOT_OWNER);

    publish(client, TELEMETRY, "{\"own-linked\":{\"level\":1}}");
    assertThat(metric(NOT_OWNER) - refused).isEqualTo(1);
    bystanderPublishes();

    HttpResponse<String> bad =
        post(
            "/api/device",
            "{\"id\":{\"entityType\":\"DEVICE\",\"id\":\""
                + device
                + "\"},\"name\":\"own-linked\",\"additionalInfo\":{\"ownerGateway\":\"nope\"}}");
    assertThat(bad.statusCode()).as(bad.body()).isEqualTo(400);
    linkToGateway(device, gateway);

    publish(client, TELEMETRY, "{\"own-linked\":{\"level\":2}}");
    assertThat(rows("level").get(device)).extracting(row -> row[1]).containsExactly(2L);
    assertThat(info(device).path("lastConnectedGateway").asText()).isEqualTo(gateway.toString());
    bystanderPublishes();
  }

  @Test
  void should_adopt_a_device_no_gateway_owns_when_adoption_is_on() throws Exception {
    UUID gateway = createDevice("own-adopter", "own-adopter-token", true);
    createDevice("own-keeper", "own-keeper-token", true);
    UUID orphan = createDevice("own-orphan", "own-orphan-token", false);
    publish(gateway3("own-keeper-token", mqttPort()), TELEMETRY, "{\"own-kept\":{\"t\":1}}");
    UUID kept = deviceId("own-kept");

    try (FieldlineServer adopting =
        FieldlineServer.start(
            config(Files.createTempDirectory("fieldline-it-"))
                .withValue(
                    "fieldline.mqtt.gateway.adopt-existing-devices",
                    ConfigValueFactory.fromAnyRef(true)))) {
      Mqtt3BlockingClient client = gateway3("own-adopter-token", adopting.mqttPort());
      publish(client, TELEMETRY, "{\"own-orphan\":{\"adopted\":1}}");
      bystanderPublishes();
      publish(client, TELEMETRY, "{\"own-kept\":{\"adopted\":1}}");
      bystanderPublishes();
      client.disconnect();
    }

    assertThat(rows("adopted")).containsOnlyKeys(orphan);
    assertThat(info(orphan).path("ownerGateway").asText()).isEqualTo(gateway.toString());
    assertThat(info(kept).path("ownerGateway").asText()).isNotEqualTo(gateway.toString());
    bystanderPublishes();
  }
}
