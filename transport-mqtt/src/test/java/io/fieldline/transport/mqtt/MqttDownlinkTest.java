package io.fieldline.transport.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5Publish;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.events.DeviceEvent.AttributesDeleted;
import io.fieldline.common.events.DeviceEvent.AttributesUpdated;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.mqtt.testkit.RecordingRpcCallback;
import io.fieldline.transport.mqtt.testkit.RunningServer;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SocketClient;
import io.fieldline.transport.mqtt.testkit.SocketClient.Received;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The downlink on a real socket (127.0.0.1, a free port) with clients we did not write — Eclipse
 * Paho (MQTT 3.1.1) and the HiveMQ client (MQTT 5) — and, where a client must misbehave at the
 * protocol level (never acknowledge, never read), a socket driven by hand.
 */
class MqttDownlinkTest {

  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Duration SETTLE = Duration.ofMillis(300);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ATTRIBUTES = "v1/devices/me/attributes";

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final ExecutorService answering = Executors.newSingleThreadExecutor();
  private RunningServer running;

  private RunningServer start(String... overrides) {
    running = new RunningServer(overrides);
    return running;
  }

  @AfterEach
  void stop() throws Exception {
    answering.shutdownNow();
    for (AutoCloseable client : closing) {
      try {
        client.close();
      } catch (Exception e) {
        // best effort: the server below is closed anyway
      }
    }
    if (running != null) {
      running.close();
    }
  }

  /** A Paho 3.1.1 client of {@code token}; every message it receives goes to {@code arrivals}. */
  private MqttAsyncClient paho(String token, Map<String, String> arrivals) throws MqttException {
    return paho(token, arrivals::put);
  }

  /**
   * A Paho 3.1.1 client of {@code token}, handing each message (topic, payload) to {@code heard}.
   */
  private MqttAsyncClient paho(String token, BiConsumer<String, String> heard)
      throws MqttException {
    MqttAsyncClient client =
        new MqttAsyncClient(
            "tcp://127.0.0.1:" + running.port, "paho-" + token, new MemoryPersistence());
    closing.add(
        () -> {
          if (client.isConnected()) {
            client.disconnectForcibly(0, 1_000);
          }
          client.close(true);
        });
    client.setCallback(
        new MqttCallback() {
          @Override
          public void connectionLost(Throwable cause) {}

          @Override
          public void messageArrived(String topic, MqttMessage message) {
            heard.accept(topic, new String(message.getPayload(), StandardCharsets.UTF_8));
          }

          @Override
          public void deliveryComplete(IMqttDeliveryToken token) {}
        });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setMqttVersion(MqttConnectOptions.MQTT_VERSION_3_1_1);
    options.setUserName(token);
    options.setAutomaticReconnect(false);
    client.connect(options).waitForCompletion(WAIT.toMillis());
    return client;
  }

  private static void publish(MqttAsyncClient client, String topic, String payload)
      throws MqttException {
    client.publish(topic, payload.getBytes(StandardCharsets.UTF_8), 1, false);
  }

  private static void answer(MqttAsyncClient client, String n) {
    try {
      publish(client, "v1/devices/me/rpc/response/" + n, "{\"gpio\":4}");
    } catch (MqttException e) {
      throw new IllegalStateException(e);
    }
  }

  private static JsonNode json(String text) throws Exception {
    return JSON.readTree(text);
  }

  private static AttributesUpdated shared(DeviceId device, KvEntry... values) {
    List<AttributeKvEntry> entries = new ArrayList<>();
    for (KvEntry value : values) {
      entries.add(new AttributeKvEntry(1L, value));
    }
    return new AttributesUpdated(device, AttributeScope.SHARED_SCOPE, entries);
  }

  @Test
  void should_answer_paho_attribute_requests_for_both_scopes_one_scope_and_everything()
      throws Exception {
    start();
    Device device = running.device("attr-token");
    running.queries.put(
        device.id(), AttributeScope.CLIENT_SCOPE, new AttributeKvEntry(1L, KvEntry.of("fw", "2")));
    running.queries.put(
        device.id(), AttributeScope.SHARED_SCOPE, new AttributeKvEntry(1L, KvEntry.of("t", 21.5)));
    running.queries.put(
        device.id(), AttributeScope.SHARED_SCOPE, new AttributeKvEntry(1L, KvEntry.of("on", true)));
    Map<String, String> arrivals = new ConcurrentHashMap<>();
    MqttAsyncClient client = paho("attr-token", arrivals);
    client.subscribe("v1/devices/me/attributes/response/+", 1).waitForCompletion(WAIT.toMillis());

    publish(
        client,
        "v1/devices/me/attributes/request/1",
        "{\"clientKeys\":\"fw\",\"sharedKeys\":\"t,on\"}");
    publish(client, "v1/devices/me/attributes/request/2", "{\"sharedKeys\":[\"on\"]}");
    publish(client, "v1/devices/me/attributes/request/3", "{}");

    await().atMost(WAIT).until(() -> arrivals.size() == 3);
    assertThat(json(arrivals.get("v1/devices/me/attributes/response/1")))
        .isEqualTo(json("{\"client\":{\"fw\":\"2\"},\"shared\":{\"t\":21.5,\"on\":true}}"));
    assertThat(json(arrivals.get("v1/devices/me/attributes/response/2")))
        .isEqualTo(json("{\"shared\":{\"on\":true}}"));
    assertThat(json(arrivals.get("v1/devices/me/attributes/response/3")))
        .isEqualTo(json("{\"client\":{\"fw\":\"2\"},\"shared\":{\"t\":21.5,\"on\":true}}"));
  }

  @Test
  void should_push_shared_attributes_to_the_subscribed_paho_client_and_not_to_the_other()
      throws Exception {
    start();
    Device listening = running.device("listening");
    Device deaf = running.device("deaf");
    Map<String, String> heard = new ConcurrentHashMap<>();
    List<String> pushes = new CopyOnWriteArrayList<>();
    MqttAsyncClient subscribed =
        paho(
            "listening",
            new ConcurrentHashMap<>() {
              @Override
              public String put(String topic, String payload) {
                pushes.add(payload);
                return super.put(topic, payload);
              }
            });
    subscribed.subscribe("v1/devices/me/attributes", 1).waitForCompletion(WAIT.toMillis());
    paho("deaf", heard);

    int taken = running.events.deliver(shared(listening.id(), KvEntry.of("mode", "eco")));
    running.events.deliver(
        new AttributesDeleted(listening.id(), AttributeScope.SHARED_SCOPE, List.of("old")));
    int notTaken = running.events.deliver(shared(deaf.id(), KvEntry.of("mode", "eco")));

    assertThat(taken).isOne();
    assertThat(notTaken).isZero();
    await().atMost(WAIT).until(() -> pushes.size() == 2);
    assertThat(pushes).containsExactly("{\"mode\":\"eco\"}", "{\"deleted\":[\"old\"]}");
    await().during(SETTLE).atMost(SETTLE.multipliedBy(3)).until(heard::isEmpty);
  }

  @Test
  void should_carry_a_two_way_rpc_to_paho_and_its_answer_back_to_the_callback() throws Exception {
    start();
    Device device = running.device("rpc-token");
    RecordingRpcCallback callback = new RecordingRpcCallback();
    Map<String, String> requests = new ConcurrentHashMap<>();
    MqttAsyncClient[] client = new MqttAsyncClient[1];
    client[0] =
        paho(
            "rpc-token",
            (topic, payload) -> {
              requests.put(topic, payload);
              // Answered from another thread, as firmware would once it has done the work.
              String n = topic.substring(topic.lastIndexOf('/') + 1);
              answering.execute(() -> answer(client[0], n));
            });
    client[0].subscribe("v1/devices/me/rpc/request/+", 1).waitForCompletion(WAIT.toMillis());

    ToDeviceRpc rpc =
        new ToDeviceRpc(
            UUID.randomUUID(),
            device.id(),
            "setGpio",
            "{\"pin\":4}",
            false,
            false,
            10_000,
            0,
            0,
            null);
    assertThat(running.events.deliver(new RpcRequested(device.id(), rpc, callback))).isOne();

    await().atMost(WAIT).until(() -> callback.calls().size() == 3);
    assertThat(callback.calls()).containsExactly("sent", "delivered", "responded:{\"gpio\":4}");
    assertThat(requests)
        .containsEntry(
            "v1/devices/me/rpc/request/1", "{\"method\":\"setGpio\",\"params\":{\"pin\":4}}");
  }

  private SocketClient socket(int receiveBuffer) throws Exception {
    SocketClient client = new SocketClient(running.port, receiveBuffer);
    closing.add(client);
    return client;
  }

  private static Received next(SocketClient client) throws Exception {
    Received received = client.read(WAIT);
    assertThat(received).as("a packet within %s", WAIT).isNotNull();
    return received;
  }

  private static void connectPersistent(SocketClient client, String token, boolean present)
      throws Exception {
    client.send(SessionClient.connectMessage(token, false, 60));
    Received connAck = next(client);
    assertThat(connAck.type()).isEqualTo(MqttMessageType.CONNACK);
    assertThat(connAck.sessionPresent()).isEqualTo(present);
  }

  @Test
  void should_retransmit_to_a_client_that_does_not_acknowledge_and_resend_after_it_reconnects()
      throws Exception {
    start("downlink.retransmit-interval = 300 ms");
    Device device = running.device("raw-token");
    SocketClient first = socket(0);
    connectPersistent(first, "raw-token", false);
    first.send(SessionClient.subscribe(1, ATTRIBUTES, MqttQoS.AT_LEAST_ONCE));
    assertThat(next(first).type()).isEqualTo(MqttMessageType.SUBACK);

    running.events.deliver(shared(device.id(), KvEntry.of("a", 1L)));

    Received sent = next(first);
    Received again = next(first);
    assertThat(sent).isEqualTo(Received.publish(1, false, 1, ATTRIBUTES, "{\"a\":1}"));
    assertThat(again).isEqualTo(Received.publish(1, true, 1, ATTRIBUTES, "{\"a\":1}"));

    first.close();
    await().atMost(WAIT).until(() -> running.sessions.activeSessions() == 0);
    SocketClient second = socket(0);
    connectPersistent(second, "raw-token", true);
    Received resent = next(second);
    assertThat(resent).isEqualTo(again);
    second.send(SessionClient.puback(1));
    await().atMost(WAIT).until(() -> running.gauge("fieldline.mqtt.downlink.held") == 0);
    assertThat(running.count("fieldline.mqtt.downlink", "outcome", "acknowledged")).isOne();
  }

  @Test
  void should_hold_a_bounded_amount_for_a_client_that_never_reads_and_count_what_it_drops()
      throws Exception {
    start(
        "downlink.max-queued = 50",
        "downlink.max-queued-bytes = 128 KiB",
        "outbound-stall-timeout = 10 minutes");
    Device device = running.device("never-reads");
    SocketClient client = socket(4096);
    client.send(SessionClient.connectMessage("never-reads", true, 0));
    assertThat(next(client).type()).isEqualTo(MqttMessageType.CONNACK);
    client.send(SessionClient.subscribe(1, ATTRIBUTES, MqttQoS.AT_MOST_ONCE));
    assertThat(next(client).type()).isEqualTo(MqttMessageType.SUBACK);
    // From here on the client reads nothing.

    String value = "x".repeat(4096);
    int pushed = 0;
    while (running.count("fieldline.mqtt.backpressure.pauses", "cause", "outbound") == 0
        || running.count("fieldline.mqtt.downlink", "outcome", "queue_full") < 100) {
      assertThat(pushed).as("the socket never filled").isLessThan(50_000);
      running.events.deliver(shared(device.id(), KvEntry.of("v", value)));
      pushed++;
    }
    int total = pushed;

    // The socket filled (the server stopped writing and reading it) and pushes were dropped. Every
    // push was either written, dropped for lack of room, or is still held within the bound.
    await()
        .atMost(WAIT)
        .until(
            () ->
                running.count("fieldline.mqtt.downlink", "outcome", "sent")
                        + running.count("fieldline.mqtt.downlink", "outcome", "queue_full")
                        + running.gauge("fieldline.mqtt.downlink.held")
                    == total);
    assertThat(running.gauge("fieldline.mqtt.downlink.held")).isLessThanOrEqualTo(50);
    assertThat(running.gauge("fieldline.mqtt.downlink.held.bytes")).isLessThanOrEqualTo(131_072);
    assertThat(running.count("fieldline.mqtt.downlink", "outcome", "queue_full"))
        .isGreaterThanOrEqualTo(100);
  }

  @Test
  void should_keep_to_the_receive_maximum_of_an_mqtt5_client() throws Exception {
    start();
    Device device = running.device("v5-token");
    Mqtt5AsyncClient client =
        Mqtt5Client.builder()
            .identifier("v5-client")
            .serverHost("127.0.0.1")
            .serverPort(running.port)
            .buildAsync();
    closing.add(() -> client.disconnect().get(5, TimeUnit.SECONDS));
    List<Mqtt5Publish> received = new CopyOnWriteArrayList<>();
    client.publishes(MqttGlobalPublishFilter.ALL, received::add, true);
    client
        .connectWith()
        .simpleAuth()
        .username("v5-token")
        .applySimpleAuth()
        .restrictions()
        .receiveMaximum(2)
        .applyRestrictions()
        .send()
        .get(10, TimeUnit.SECONDS);
    client
        .subscribeWith()
        .topicFilter("v1/devices/me/attributes")
        .qos(MqttQos.AT_LEAST_ONCE)
        .send()
        .get(10, TimeUnit.SECONDS);

    for (long v = 1; v <= 5; v++) {
      assertThat(running.events.deliver(shared(device.id(), KvEntry.of("v", v)))).isOne();
    }

    await().atMost(WAIT).until(() -> received.size() == 2);
    await().during(SETTLE).atMost(SETTLE.multipliedBy(3)).until(() -> received.size() == 2);
    received.get(0).acknowledge();
    await().atMost(WAIT).until(() -> received.size() == 3);
    received.get(1).acknowledge();
    received.get(2).acknowledge();
    await().atMost(WAIT).until(() -> received.size() == 5);
    assertThat(received)
        .extracting(publish -> new String(publish.getPayloadAsBytes(), StandardCharsets.UTF_8))
        .containsExactly("{\"v\":1}", "{\"v\":2}", "{\"v\":3}", "{\"v\":4}", "{\"v\":5}");
    assertThat(client.getState().isConnected()).isTrue();
  }
}
