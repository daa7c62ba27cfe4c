package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's gateway API against a real server and real Cassandra, driven by the HiveMQ MQTT
 * client (3.1.1 and 5): one PUBACK per gateway message with every child's rows already stored,
 * children created, typed and listed over REST with their gateway, client attributes of children,
 * and the bounds refused as documented while the gateway keeps working.
 */
class GatewayIT extends GatewayTestBase {

  private static final String TELEMETRY = "v1/gateway/telemetry";
  private static final int MAX_DEVICES = 120;

  private Mqtt3BlockingClient client3;
  private Mqtt5BlockingClient client5;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("fieldline.mqtt.gateway.max-devices-per-message", MAX_DEVICES);
  }

  @AfterEach
  void disconnect() {
    if (client3 != null && client3.getState().isConnected()) {
      client3.disconnect();
    }
    if (client5 != null && client5.getState().isConnected()) {
      client5.disconnect();
    }
  }

  private Mqtt3BlockingClient gateway3(String token) {
    client3 =
        Mqtt3Client.builder()
            .identifier("it-" + token)
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username(token)
            .applySimpleAuth()
            .buildBlocking();
    client3.connect();
    return client3;
  }

  private Mqtt5BlockingClient gateway5(String token) {
    client5 =
        Mqtt5Client.builder()
            .identifier("it5-" + token)
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username(token)
            .applySimpleAuth()
            .buildBlocking();
    client5.connect();
    return client5;
  }

  private static void publish(Mqtt3BlockingClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  private static void publish(Mqtt5BlockingClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  /** {@code {"<prefix>0":[{"ts":..,"values":{"seq":0}}],"<prefix>1":{"seq":1},...}}. */
  private static String telemetryFor(String prefix, int children, long ts) {
    StringBuilder json = new StringBuilder("{");
    for (int i = 0; i < children; i++) {
      if (i > 0) {
        json.append(',');
      }
      json.append('"').append(prefix).append(i).append("\":");
      // Half with the gateway's own timestamp, half stamped by the server.
      if (i % 2 == 0) {
        json.append("[{\"ts\":").append(ts).append(",\"values\":{\"seq\":").append(i).append("}}]");
      } else {
        json.append("{\"seq\":").append(i).append('}');
      }
    }
    return json.append('}').toString();
  }

  @Test
  void should_store_every_child_before_the_one_puback_when_a_gateway_publishes_for_100_children() {
    UUID gateway = createDevice("gw-hundred", "gw-hundred-token", true);
    Mqtt3BlockingClient client = gateway3("gw-hundred-token");
    double pubacks = metric("fieldline_mqtt_puback_sent_total");
    double points = metric("fieldline_mqtt_gateway_points_total{topic=\"telemetry\"");

    publish(client, TELEMETRY, telemetryFor("hundred-", 100, 1_700_000_000_000L));

    // The PUBACK has arrived: every child's row must be readable now, not eventually.
    Map<String, JsonNode> children = listed("hundred-");
    Map<UUID, List<long[]>> rows = rows("seq");
    assertThat(children).hasSize(100);
    for (int i = 0; i < 100; i++) {
      JsonNode child = children.get("hundred-" + i);
      assertThat(child.get("type").asText()).isEqualTo("default");
      assertThat(child.at("/additionalInfo/lastConnectedGateway").asText())
          .isEqualTo(gateway.toString());
      List<long[]> childRows = rows.get(UUID.fromString(child.at("/id/id").asText()));
      assertThat(childRows).as("rows of hundred-%d", i).hasSize(1);
      assertThat(childRows.get(0)[1]).isEqualTo(i);
      if (i % 2 == 0) {
        assertThat(childRows.get(0)[0]).isEqualTo(1_700_000_000_000L);
      }
    }
    assertThat(metric("fieldline_mqtt_puback_sent_total") - pubacks)
        .as("one PUBACK for the one PUBLISH")
        .isEqualTo(1);
    assertThat(metric("fieldline_mqtt_gateway_child_creations_total")).isGreaterThanOrEqualTo(100);
    assertThat(metric("fieldline_mqtt_gateway_points_total{topic=\"telemetry\"") - points)
        .isEqualTo(100);

    // The gateway and its other additional info are untouched; its children point at it.
    JsonNode gatewayDevice = ok(get("/api/device/" + gateway));
    assertThat(gatewayDevice.at("/additionalInfo/gateway").asBoolean()).isTrue();
    assertThat(gatewayDevice.at("/additionalInfo/description").asText()).isEqualTo("it");

    // A second message to the same children: known to the session, one more row each.
    publish(client, TELEMETRY, telemetryFor("hundred-", 100, 1_700_000_001_000L));
    Map<UUID, List<long[]>> again = rows("seq");
    for (JsonNode child : children.values()) {
      assertThat(again.get(UUID.fromString(child.at("/id/id").asText()))).hasSize(2);
    }
  }

  @Test
  void should_create_the_child_with_its_type_when_a_gateway_connects_it() {
    UUID gateway = createDevice("gw-connect", "gw-connect-token", true);
    Mqtt3BlockingClient client = gateway3("gw-connect-token");

    publish(client, "v1/gateway/connect", "{\"device\":\"Thermo A\",\"type\":\"thermometer\"}");

    JsonNode child = ok(get("/api/tenant/devices?deviceName=Thermo%20A"));
    assertThat(child.get("type").asText()).isEqualTo("thermometer");
    assertThat(child.at("/additionalInfo/lastConnectedGateway").asText())
        .isEqualTo(gateway.toString());

    publish(client, "v1/gateway/telemetry", "{\"Thermo A\":{\"temperature\":21}}");
    publish(client, "v1/gateway/disconnect", "{\"device\":\"Thermo A\"}");
    JsonNode latest =
        ok(
            get(
                "/api/plugins/telemetry/DEVICE/"
                    + child.at("/id/id").asText()
                    + "/values/timeseries?keys=temperature"));
    assertThat(latest.at("/temperature/0/value").asText()).isEqualTo("21");
  }

  @Test
  void should_store_each_childs_client_attributes_when_a_gateway_publishes_them() {
    createDevice("gw-attributes", "gw-attributes-token", true);
    Mqtt3BlockingClient client = gateway3("gw-attributes-token");

    publish(
        client,
        "v1/gateway/attributes",
        "{\"attr-A\":{\"firmware\":\"1.2.3\",\"battery\":87},\"attr-B\":{\"open\":true}}");

    Map<String, JsonNode> children = listed("attr-");
    JsonNode a =
        ok(
            get(
                "/api/plugins/telemetry/DEVICE/"
                    + children.get("attr-A").at("/id/id").asText()
                    + "/values/attributes/CLIENT_SCOPE"));
    assertThat(a.findValuesAsText("key")).containsExactlyInAnyOrder("firmware", "battery");
    JsonNode b =
        ok(
            get(
                "/api/plugins/telemetry/DEVICE/"
                    + children.get("attr-B").at("/id/id").asText()
                    + "/values/attributes/CLIENT_SCOPE"));
    assertThat(b.get(0).get("key").asText()).isEqualTo("open");
    assertThat(b.get(0).get("value").asBoolean()).isTrue();
  }

  @Test
  void should_dead_letter_and_ack_then_keep_working_when_a_message_names_too_many_devices() {
    UUID gateway = createDevice("gw-bounds", "gw-bounds-token", true);
    Mqtt3BlockingClient client = gateway3("gw-bounds-token");
    double refused = metric("fieldline_mqtt_gateway_refused_total{reason=\"too_many_devices\"");

    publish(client, TELEMETRY, telemetryFor("over-", MAX_DEVICES + 1, 1_700_000_000_000L));

    assertThat(listed("over-")).as("nothing of the refused message is stored").isEmpty();
    JsonNode letters = ok(get("/api/fieldline/deadletters/DEVICE/" + gateway));
    assertThat(letters).hasSize(1);
    assertThat(letters.get(0).get("topic").asText()).isEqualTo(TELEMETRY);
    assertThat(metric("fieldline_mqtt_gateway_refused_total{reason=\"too_many_devices\"") - refused)
        .isEqualTo(1);

    // The same connection goes on.
    publish(client, TELEMETRY, telemetryFor("within-", 3, 1_700_000_000_000L));
    assertThat(listed("within-")).hasSize(3);
  }

  @Test
  void should_answer_mqtt5_with_quota_exceeded_when_a_message_names_too_many_devices() {
    createDevice("gw-five", "gw-five-token", true);
    Mqtt5BlockingClient client = gateway5("gw-five-token");

    assertThatThrownBy(() -> publish(client, TELEMETRY, telemetryFor("five-", MAX_DEVICES + 1, 1L)))
        .isInstanceOfSatisfying(
            Mqtt5PubAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5PubAckReasonCode.QUOTA_EXCEEDED));

    publish(client, TELEMETRY, "{\"five-ok\":{\"t\":1}}");
    assertThat(listed("five-")).containsOnlyKeys("five-ok");
  }

  @Test
  void should_dead_letter_gateway_topics_as_unknown_when_the_device_is_not_a_gateway() {
    UUID plain = createDevice("not-a-gateway", "not-a-gateway-token", false);
    Mqtt5BlockingClient client = gateway5("not-a-gateway-token");

    assertThatThrownBy(() -> publish(client, TELEMETRY, "{\"stray-A\":{\"t\":1}}"))
        .isInstanceOfSatisfying(
            Mqtt5PubAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5PubAckReasonCode.TOPIC_NAME_INVALID));

    assertThat(listed("stray-")).isEmpty();
    JsonNode letters = ok(get("/api/fieldline/deadletters/DEVICE/" + plain));
    assertThat(letters.get(0).get("reason").asText()).contains("not a gateway");
  }

  @Test
  void should_store_no_second_copy_when_a_message_stored_behind_a_failed_one_is_resent()
      throws Exception {
    createDevice("gw-resend", "gw-resend-token", true);
    UUID holder = createDevice("resend-holder", "resend-holder-token", false);
    Set<Integer> acked = ConcurrentHashMap.newKeySet();
    AtomicInteger lost = new AtomicInteger();
    MqttAsyncClient client =
        new MqttAsyncClient("tcp://127.0.0.1:" + mqttPort(), "gw-resend", new MemoryPersistence());
    client.setCallback(
        new MqttCallback() {
          @Override
          public void connectionLost(Throwable cause) {
            lost.incrementAndGet();
          }

          @Override
          public void messageArrived(String topic, MqttMessage message) {}

          @Override
          public void deliveryComplete(IMqttDeliveryToken token) {
            acked.add(token.getMessageId());
          }
        });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setUserName("gw-resend-token");
    options.setCleanSession(false);
    client.connect(options).waitForCompletion(10_000);
    String children = telemetryFor("resend-", 100, 1L).replace("seq", "first");
    client
        .publish(TELEMETRY, children.getBytes(StandardCharsets.UTF_8), 1, false)
        .waitForCompletion(30_000);
    double reused = metric("fieldline_mqtt_gateway_timestamps_reused_total");

    // A claim on a name held by a device with another name: creating a device of that name fails
    // (the name is taken, yet no device has it) until the claim is gone.
    cql.execute(
        "INSERT INTO device_by_name (bucket, name, device_id) VALUES (0, 'resend-poison', ?)",
        holder);
    IMqttDeliveryToken failing =
        client.publish(
            TELEMETRY, "{\"resend-poison\":{\"x\":1}}".getBytes(StandardCharsets.UTF_8), 1, false);
    StringBuilder second = new StringBuilder("{");
    for (int i = 0; i < 100; i++) {
      second.append(i == 0 ? "" : ",").append("\"resend-").append(i).append("\":{\"k\":1}");
    }
    IMqttDeliveryToken stored =
        client.publish(
            TELEMETRY, second.append('}').toString().getBytes(StandardCharsets.UTF_8), 1, false);

    // The first fails, so neither is acknowledged; the second is stored all the same.
    await().atMost(Duration.ofSeconds(30)).until(() -> lost.get() == 1);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> copies("resend-", "k").equals(Collections.nCopies(100, 1)));
    assertThat(acked).doesNotContain(failing.getMessageId(), stored.getMessageId());

    cql.execute("DELETE FROM device_by_name WHERE bucket = 0 AND name = 'resend-poison'");
    IMqttToken reconnect = client.connect(options);
    reconnect.waitForCompletion(30_000);
    assertThat(reconnect.getSessionPresent()).isTrue();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> acked.containsAll(List.of(failing.getMessageId(), stored.getMessageId())));

    assertThat(copies("resend-", "k"))
        .as("the resent message rewrote its rows, it did not add new ones")
        .isEqualTo(Collections.nCopies(100, 1));
    assertThat(listed("resend-poison")).hasSize(1);
    assertThat(metric("fieldline_mqtt_gateway_timestamps_reused_total") - reused)
        .isGreaterThanOrEqualTo(1);
    client.disconnect().waitForCompletion(5_000);
    client.close();
  }

  /** The number of rows of {@code key} of each child named prefix + 0..99, in that order. */
  private List<Integer> copies(String prefix, String key) {
    Map<String, JsonNode> children = listed(prefix);
    Map<UUID, Map<String, Integer>> counts = rowCounts();
    List<Integer> copies = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      JsonNode child = children.get(prefix + i);
      Map<String, Integer> rows =
          child == null ? Map.of() : counts.getOrDefault(id(child), Map.of());
      copies.add(rows.getOrDefault(key, 0));
    }
    return copies;
  }

  private static UUID id(JsonNode device) {
    return UUID.fromString(device.at("/id/id").asText());
  }
}
