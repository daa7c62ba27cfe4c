package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The downlink half of ThingsBoard's gateway API against a real server and Cassandra, with the
 * HiveMQ MQTT client (3.1.1 and 5) as the gateway and ThingsBoard's REST calls on the other side: a
 * child's attribute requests, shared attributes set over REST pushed to the gateway (until it
 * disconnects the child), two-way and one-way RPC to a child answered through its gateway, a
 * persistent RPC waiting for the child's gateway, and a child whose gateway is offline answered as
 * an offline device is.
 */
class GatewayDownlinkIT extends GatewayTestBase {

  private static final String RPC = "v1/gateway/rpc";
  private static final String ATTRIBUTES = "v1/gateway/attributes";
  private static final String RESPONSE = "v1/gateway/attributes/response";

  private final List<Runnable> cleanups = new ArrayList<>();

  @AfterEach
  void disconnect() {
    try {
      cleanups.forEach(Runnable::run);
    } finally {
      cleanups.clear();
    }
  }

  private Mqtt3BlockingClient gateway3(String token) {
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("down-" + token)
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
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

  private Mqtt5BlockingClient gateway5(String token) {
    Mqtt5BlockingClient client =
        Mqtt5Client.builder()
            .identifier("down5-" + token)
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
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

  /**
   * A gateway on MQTT 3.1.1 that answers every RPC for a child on {@code v1/gateway/rpc} with
   * {@code {"echo": params}} (unless {@code answer} is false), recording each request.
   */
  private Mqtt3AsyncClient answeringGateway(
      String token, boolean answer, List<JsonNode> requests, String... children) {
    Mqtt3AsyncClient client =
        Mqtt3Client.builder()
            .identifier("rpc-" + token)
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username(token)
            .applySimpleAuth()
            .buildAsync();
    client.connect().join();
    cleanups.add(
        () -> {
          if (client.getState().isConnected()) {
            client.disconnect().join();
          }
        });
    client
        .subscribeWith()
        .topicFilter(RPC)
        .qos(MqttQos.AT_LEAST_ONCE)
        .callback(
            publish -> {
              JsonNode request = read(publish.getPayloadAsBytes());
              requests.add(request);
              if (answer) {
                ObjectNode reply = JSON.createObjectNode();
                reply.put("device", request.get("device").asText());
                reply.put("id", request.at("/data/id").asInt());
                reply.putObject("data").set("echo", request.at("/data/params"));
                client
                    .publishWith()
                    .topic(RPC)
                    .qos(MqttQos.AT_LEAST_ONCE)
                    .payload(reply.toString().getBytes(StandardCharsets.UTF_8))
                    .send();
              }
            })
        .send()
        .join();
    for (String child : children) {
      publish(client, "v1/gateway/connect", "{\"device\":\"" + child + "\"}");
    }
    return client;
  }

  private static void publish(Mqtt3AsyncClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send()
        .join();
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

  private static JsonNode read(byte[] payload) {
    try {
      return JSON.readTree(payload);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode next(Mqtt3BlockingClient.Mqtt3Publishes publishes, String topic)
      throws InterruptedException {
    Optional<Mqtt3Publish> received = publishes.receive(10, TimeUnit.SECONDS);
    assertThat(received).as("a PUBLISH on %s within 10 s", topic).isPresent();
    assertThat(received.get().getTopic().toString()).isEqualTo(topic);
    return read(received.get().getPayloadAsBytes());
  }

  private static JsonNode next(Mqtt5BlockingClient.Mqtt5Publishes publishes, String topic)
      throws InterruptedException {
    Optional<Mqtt5Publish> received = publishes.receive(10, TimeUnit.SECONDS);
    assertThat(received).as("a PUBLISH on %s within 10 s", topic).isPresent();
    assertThat(received.get().getTopic().toString()).isEqualTo(topic);
    return read(received.get().getPayloadAsBytes());
  }

  @Test
  void should_answer_a_childs_attribute_requests_when_the_gateway_asks_for_client_and_shared_keys()
      throws Exception {
    createDevice("gw-ask", "gw-ask-token", true);
    Mqtt3BlockingClient client = gateway3("gw-ask-token");
    try (Mqtt3BlockingClient.Mqtt3Publishes publishes =
        client.publishes(MqttGlobalPublishFilter.ALL)) {
      client.subscribeWith().topicFilter(RESPONSE).qos(MqttQos.AT_LEAST_ONCE).send();
      publish(client, ATTRIBUTES, "{\"ask-A\":{\"firmware\":\"1.0.3\"}}");
      UUID child = deviceId("ask-A");
      ok(
          post(
              "/api/plugins/telemetry/DEVICE/" + child + "/attributes/SHARED_SCOPE",
              "{\"target\":21,\"mode\":\"eco\"}"));

      publish(
          client,
          "v1/gateway/attributes/request",
          "{\"id\":1,\"device\":\"ask-A\",\"client\":true,\"key\":\"firmware\"}");
      assertThat(next(publishes, RESPONSE))
          .isEqualTo(read("{\"id\":1,\"device\":\"ask-A\",\"value\":\"1.0.3\"}".getBytes()));

      publish(
          client,
          "v1/gateway/attributes/request",
          "{\"id\":2,\"device\":\"ask-A\",\"client\":false,\"keys\":[\"target\",\"mode\"]}");
      assertThat(next(publishes, RESPONSE))
          .isEqualTo(
              read(
                  "{\"id\":2,\"device\":\"ask-A\",\"values\":{\"target\":21,\"mode\":\"eco\"}}"
                      .getBytes()));

      // A child the gateway never named: created and linked, as ThingsBoard does, with nothing.
      publish(
          client,
          "v1/gateway/attributes/request",
          "{\"id\":3,\"device\":\"ask-new\",\"client\":false,\"key\":\"target\"}");
      assertThat(next(publishes, RESPONSE))
          .isEqualTo(read("{\"id\":3,\"device\":\"ask-new\"}".getBytes()));
      assertThat(listed("ask-new")).containsOnlyKeys("ask-new");
    }
  }

  @Test
  void should_push_a_childs_shared_attributes_set_over_rest_until_the_gateway_disconnects_it()
      throws Exception {
    createDevice("gw-push", "gw-push-token", true);
    Mqtt5BlockingClient client = gateway5("gw-push-token");
    try (Mqtt5BlockingClient.Mqtt5Publishes publishes =
        client.publishes(MqttGlobalPublishFilter.ALL)) {
      client.subscribeWith().topicFilter(ATTRIBUTES).qos(MqttQos.AT_LEAST_ONCE).send();
      publish(client, "v1/gateway/connect", "{\"device\":\"push-A\",\"type\":\"valve\"}");
      publish(client, "v1/gateway/connect", "{\"device\":\"push-B\"}");
      UUID a = deviceId("push-A");
      UUID b = deviceId("push-B");

      ok(post("/api/plugins/telemetry/DEVICE/" + a + "/attributes/SHARED_SCOPE", "{\"open\":1}"));
      assertThat(next(publishes, ATTRIBUTES))
          .isEqualTo(read("{\"device\":\"push-A\",\"data\":{\"open\":1}}".getBytes()));

      assertThat(
              delete("/api/plugins/telemetry/DEVICE/" + a + "/SHARED_SCOPE?keys=open").statusCode())
          .isEqualTo(200);
      assertThat(next(publishes, ATTRIBUTES))
          .isEqualTo(read("{\"device\":\"push-A\",\"data\":{\"deleted\":[\"open\"]}}".getBytes()));

      // Server-side attributes are not the device's: nothing is pushed for them.
      ok(post("/api/plugins/telemetry/DEVICE/" + a + "/attributes/SERVER_SCOPE", "{\"x\":1}"));

      publish(client, "v1/gateway/disconnect", "{\"device\":\"push-A\"}");
      ok(post("/api/plugins/telemetry/DEVICE/" + a + "/attributes/SHARED_SCOPE", "{\"open\":2}"));
      ok(post("/api/plugins/telemetry/DEVICE/" + b + "/attributes/SHARED_SCOPE", "{\"open\":3}"));
      // Each change is published before the next one is made: B's push coming first means A's
      // (and the server-side one) never came.
      assertThat(next(publishes, ATTRIBUTES))
          .isEqualTo(read("{\"device\":\"push-B\",\"data\":{\"open\":3}}".getBytes()));
    }
  }

  @Test
  void should_answer_the_rest_caller_with_the_gateways_reply_when_a_child_gets_a_two_way_rpc() {
    createDevice("gw-rpc", "gw-rpc-token", true);
    List<JsonNode> requests = new CopyOnWriteArrayList<>();
    answeringGateway("gw-rpc-token", true, requests, "rpc-A");
    UUID child = deviceId("rpc-A");

    HttpResponse<String> answer =
        post(
            "/api/rpc/twoway/" + child,
            "{\"method\":\"getTemperature\",\"params\":{\"unit\":\"C\"},\"timeout\":5000}");

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(json(answer)).isEqualTo(read("{\"echo\":{\"unit\":\"C\"}}".getBytes()));
    assertThat(requests).hasSize(1);
    JsonNode request = requests.get(0);
    assertThat(request.get("device").asText()).isEqualTo("rpc-A");
    assertThat(request.at("/data/method").asText()).isEqualTo("getTemperature");
    assertThat(request.at("/data/params")).isEqualTo(read("{\"unit\":\"C\"}".getBytes()));
    assertThat(request.at("/data/id").isInt()).isTrue();
  }

  @Test
  void should_answer_a_one_way_rpc_to_a_child_once_its_gateway_acknowledged_it() {
    createDevice("gw-oneway", "gw-oneway-token", true);
    List<JsonNode> requests = new CopyOnWriteArrayList<>();
    answeringGateway("gw-oneway-token", false, requests, "oneway-A");

    HttpResponse<String> answer =
        post(
            "/api/rpc/oneway/" + deviceId("oneway-A"),
            "{\"method\":\"setGpio\",\"params\":{\"pin\":4,\"value\":1}}");

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    // HiveMQ's client may send the PUBACK before its callback has recorded the request.
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 1);
    assertThat(requests.get(0).at("/data/method").asText()).isEqualTo("setGpio");
  }

  @Test
  void should_time_out_as_for_an_offline_device_when_the_childs_gateway_is_offline() {
    createDevice("gw-offline", "gw-offline-token", true);
    List<JsonNode> requests = new CopyOnWriteArrayList<>();
    Mqtt3AsyncClient gateway = answeringGateway("gw-offline-token", true, requests, "offline-A");
    UUID child = deviceId("offline-A");
    gateway.disconnect().join();
    UUID plain = createDevice("offline-plain", "offline-plain-token", false);

    HttpResponse<String> toChild =
        post("/api/rpc/twoway/" + child, "{\"method\":\"m\",\"timeout\":500}");
    HttpResponse<String> toDevice =
        post("/api/rpc/twoway/" + plain, "{\"method\":\"m\",\"timeout\":500}");

    assertThat(toChild.statusCode()).isEqualTo(504).isEqualTo(toDevice.statusCode());
    assertThat(json(toChild).get("message")).isEqualTo(json(toDevice).get("message"));
    assertThat(json(toChild).get("errorCode")).isEqualTo(json(toDevice).get("errorCode"));
    assertThat(requests).isEmpty();
  }

  @Test
  void should_deliver_a_persistent_rpc_to_a_child_when_its_gateway_connects_it() {
    UUID gateway = createDevice("gw-later", "gw-later-token", true);
    UUID child = createDevice("later-A", "later-A-token", false);
    // Created over REST: the gateway may act for it once an administrator linked it.
    linkToGateway(child, gateway);
    HttpResponse<String> queued =
        post(
            "/api/rpc/twoway/" + child,
            "{\"method\":\"reboot\",\"params\":{\"delay\":1},\"persistent\":true,"
                + "\"expirationTime\":"
                + (System.currentTimeMillis() + 60_000)
                + "}");
    String rpcId = ok(queued).get("rpcId").asText();

    List<JsonNode> requests = new CopyOnWriteArrayList<>();
    answeringGateway("gw-later-token", true, requests, "later-A");

    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () -> ok(get("/api/rpc/persistent/" + rpcId)).get("status").asText(),
            "SUCCESSFUL"::equals);
    assertThat(ok(get("/api/rpc/persistent/" + rpcId)).get("response"))
        .isEqualTo(read("{\"echo\":{\"delay\":1}}".getBytes()));
    assertThat(requests).hasSize(1);
  }
}
