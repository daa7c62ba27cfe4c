package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt5.Mqtt5AsyncClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5BlockingClient;
import com.hivemq.client.mqtt.mqtt5.Mqtt5Client;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5ConnAckException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5DisconnectException;
import com.hivemq.client.mqtt.mqtt5.exceptions.Mqtt5PubAckException;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAck;
import com.hivemq.client.mqtt.mqtt5.message.connect.connack.Mqtt5ConnAckReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.disconnect.Mqtt5DisconnectReasonCode;
import com.hivemq.client.mqtt.mqtt5.message.publish.Mqtt5PublishResult;
import com.hivemq.client.mqtt.mqtt5.message.publish.puback.Mqtt5PubAckReasonCode;
import io.fieldline.common.device.Device;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.paho.mqttv5.client.IMqttToken;
import org.eclipse.paho.mqttv5.client.MqttAsyncClient;
import org.eclipse.paho.mqttv5.client.MqttConnectionOptions;
import org.eclipse.paho.mqttv5.client.persist.MemoryPersistence;
import org.eclipse.paho.mqttv5.common.MqttMessage;
import org.eclipse.paho.mqttv5.common.packet.MqttProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * MQTT 5 beside MQTT 3.1.1 on the same listener, with clients we did not write: HiveMQ's MQTT 5
 * client and Eclipse Paho's v5 client, and raw packets encoded by Netty for what a well-behaved
 * client never sends. Every test runs next to an MQTT 3.1.1 bystander that must keep being served
 * ({@link BadClientTestBase}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class Mqtt5IT extends BadClientTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TELEMETRY = "v1/devices/me/telemetry";

  @Test
  void should_store_every_thingsboard_form_before_a_success_puback() {
    Device device = createDevice("v5-forms", "v5-forms-token");
    Mqtt5BlockingClient client = hivemq("v5-forms");
    Mqtt5ConnAck connAck =
        client.connectWith().simpleAuth().username("v5-forms-token").applySimpleAuth().send();

    assertThat(connAck.getReasonCode()).isEqualTo(Mqtt5ConnAckReasonCode.SUCCESS);
    assertThat(connAck.getRestrictions().getReceiveMaximum()).isEqualTo(100);
    assertThat(connAck.getRestrictions().getMaximumPacketSize()).isEqualTo(65536);
    assertThat(connAck.getRestrictions().getTopicAliasMaximum()).isEqualTo(16);
    assertThat(connAck.getRestrictions().isSharedSubscriptionAvailable()).isFalse();
    assertThat(connAck.getRestrictions().areSubscriptionIdentifiersAvailable()).isFalse();
    long now = System.currentTimeMillis();
    List<String> payloads =
        List.of(
            "{\"a\":1}",
            "{\"ts\":" + (now - 3000) + ",\"values\":{\"b\":2}}",
            "[{\"ts\":" + (now - 2000) + ",\"values\":{\"c\":3}},{\"d\":4}]");
    for (String payload : payloads) {
      Mqtt5PublishResult result = publish(client, TELEMETRY, payload);
      assertThat(pubAckCode(result)).isEqualTo(Mqtt5PubAckReasonCode.SUCCESS);
    }
    // Each PUBACK came after its rows were written: they are all there now, no waiting.
    assertThat(rows(device)).isEqualTo(4);
    assertThat(pubAckCode(publish(client, "v1/devices/me/attributes", "{\"firmware\":\"1.2.3\"}")))
        .isEqualTo(Mqtt5PubAckReasonCode.SUCCESS);
    JsonNode attributes =
        readJson(
            "/api/plugins/telemetry/DEVICE/" + device.id() + "/values/attributes/CLIENT_SCOPE");
    assertThat(attributes.get(0).get("key").asText()).isEqualTo("firmware");
    client.disconnect();
  }

  @Test
  void should_answer_invalid_json_with_0x99_and_unknown_topics_with_0x90_and_keep_both()
      throws Exception {
    Device device = createDevice("v5-poet", "v5-poet-token");
    Mqtt5BlockingClient client = hivemq("v5-poet");
    client.connectWith().simpleAuth().username("v5-poet-token").applySimpleAuth().send();

    // HiveMQ's client reports an error reason code as an exception carrying the PUBACK.
    assertThatThrownBy(() -> publish(client, TELEMETRY, "{\"temperature\": 21.5,"))
        .isInstanceOfSatisfying(
            Mqtt5PubAckException.class,
            e -> {
              assertThat(e.getMqttMessage().getReasonCode())
                  .isEqualTo(Mqtt5PubAckReasonCode.PAYLOAD_FORMAT_INVALID);
              assertThat(e.getMqttMessage().getReasonString().map(Object::toString))
                  .hasValueSatisfying(text -> assertThat(text).contains("dead letter"));
            });
    assertThatThrownBy(() -> publish(client, "v1/devices/me/telemetr", "{\"t\":1}"))
        .isInstanceOfSatisfying(
            Mqtt5PubAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5PubAckReasonCode.TOPIC_NAME_INVALID));
    JsonNode letters = readJson("/api/fieldline/deadletters/DEVICE/" + device.id());
    assertThat(letters)
        .extracting(letter -> letter.get("topic").asText())
        .containsExactlyInAnyOrder(TELEMETRY, "v1/devices/me/telemetr");
    // The connection is kept: the next message is stored.
    assertThat(pubAckCode(publish(client, TELEMETRY, "{\"temperature\": 21.5}")))
        .isEqualTo(Mqtt5PubAckReasonCode.SUCCESS);
    assertThat(rows(device)).isEqualTo(1);
    client.disconnect();
  }

  @Test
  void should_refuse_unknown_and_missing_credentials_with_thingsboard_v5_codes() {
    assertThatThrownBy(
            () ->
                hivemq("v5-stranger")
                    .connectWith()
                    .simpleAuth()
                    .username("no-such-token")
                    .applySimpleAuth()
                    .send())
        .isInstanceOfSatisfying(
            Mqtt5ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5ConnAckReasonCode.NOT_AUTHORIZED));
    assertThatThrownBy(() -> hivemq("").connect())
        .isInstanceOfSatisfying(
            Mqtt5ConnAckException.class,
            e ->
                assertThat(e.getMqttMessage().getReasonCode())
                    .isEqualTo(Mqtt5ConnAckReasonCode.BAD_USER_NAME_OR_PASSWORD));
  }

  @Test
  void should_respect_receive_maximum_when_the_client_has_many_messages_in_flight() {
    Device device = createDevice("v5-burst", "v5-burst-token");
    Mqtt5AsyncClient client = hivemq("v5-burst").toAsync();
    client.connectWith().simpleAuth().username("v5-burst-token").applySimpleAuth().send().join();
    long now = System.currentTimeMillis();
    List<CompletableFuture<Mqtt5PublishResult>> results = new ArrayList<>();
    // Ten times the Receive Maximum at once: the client keeps at most 100 unacknowledged.
    for (int i = 0; i < 1000; i++) {
      results.add(
          client
              .publishWith()
              .topic(TELEMETRY)
              .qos(MqttQos.AT_LEAST_ONCE)
              .payload(
                  ("{\"ts\":" + (now - i) + ",\"values\":{\"n\":" + i + "}}")
                      .getBytes(StandardCharsets.UTF_8))
              .send());
    }
    for (CompletableFuture<Mqtt5PublishResult> result : results) {
      assertThat(pubAckCode(result.join())).isEqualTo(Mqtt5PubAckReasonCode.SUCCESS);
    }
    assertThat(rows(device)).isEqualTo(1000);
    assertThat(client.getState().isConnected()).isTrue();
    client.disconnect().join();
  }

  @Test
  void should_disconnect_with_0x93_when_receive_maximum_is_exceeded() throws Exception {
    createDevice("v5-greedy", "v5-greedy-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-greedy", "v5-greedy-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);
    // QoS 2 without PUBREL: each exchange stays open and counts against Receive Maximum (100).
    for (int id = 1; id <= 100; id++) {
      raw.send(qos2(id));
    }
    for (int id = 1; id <= 100; id++) {
      assertThat(raw.readPacket()[0] & 0xF0).as("PUBREC %d", id).isEqualTo(0x50);
    }
    // Exactly at the maximum the connection is fine...
    raw.out.write(new byte[] {(byte) 0xC0, 0x00});
    raw.out.flush();
    assertThat(raw.readPacket()[0] & 0xF0).as("PINGRESP").isEqualTo(0xD0);
    // ...one more is one too many.
    raw.send(qos2(101));
    assertThat(raw.disconnectReason()).isEqualTo(0x93);
  }

  @Test
  void should_disconnect_with_0x95_when_a_packet_exceeds_the_maximum_packet_size()
      throws Exception {
    createDevice("v5-big", "v5-big-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-big", "v5-big-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);
    raw.send(
        MqttMessageBuilders.publish()
            .topicName(TELEMETRY)
            .qos(MqttQoS.AT_LEAST_ONCE)
            .messageId(1)
            .payload(Unpooled.wrappedBuffer(new byte[70_000]))
            .build());
    assertThat(raw.disconnectReason()).isEqualTo(0x95);
  }

  @Test
  void should_count_the_fixed_header_in_the_maximum_packet_size() throws Exception {
    Device device = createDevice("v5-edge", "v5-edge-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-edge", "v5-edge-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);
    // Topic 2 + 23, packet id 2, property length 1; the remaining length takes three bytes, so
    // the whole packet is 1 + 3 + 28 + payload: exactly the Maximum Packet Size (65536)...
    raw.send(paddedPublish(1, 65_536 - 32));
    assertThat(raw.readPubAck()).containsExactly(0, 1, 0x00);
    // ...and one byte more is too large, though its remaining length (65533) is not.
    raw.send(paddedPublish(2, 65_536 - 31));
    assertThat(raw.disconnectReason()).isEqualTo(0x95);
    assertThat(rows(device)).isEqualTo(1);
  }

  @Test
  void should_refuse_a_connect_that_repeats_a_property_with_0x82() throws Exception {
    createDevice("v5-twice", "v5-twice-token");
    // A Receive Maximum given twice (MQTT 5 §3.1.2.11.3): no encoder we have writes it, so the
    // CONNECT is written byte by byte.
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 5, (byte) 0x82, 0, 60});
    body.write(new byte[] {6, 0x21, 0, 10, 0x21, 0, 20});
    writeString(body, "v5-twice");
    writeString(body, "v5-twice-token");
    RawV5 raw = new RawV5(socket());
    raw.out.write(0x10);
    raw.out.write(body.size());
    body.writeTo(raw.out);
    raw.out.flush();
    byte[] connAck = raw.readPacket();
    assertThat(connAck[0] & 0xF0).isEqualTo(0x20);
    assertThat(connAck[2] & 0xFF).as("CONNACK reason").isEqualTo(0x82);

    // User Property may repeat: the same CONNECT with two of them is accepted.
    Mqtt5BlockingClient client = hivemq("v5-twice");
    client
        .connectWith()
        .simpleAuth()
        .username("v5-twice-token")
        .applySimpleAuth()
        .userProperties()
        .add("a", "1")
        .add("a", "2")
        .applyUserProperties()
        .send();
    assertThat(client.getState().isConnected()).isTrue();
    client.disconnect();
  }

  @Test
  void should_disconnect_with_0x82_when_a_response_topic_holds_a_wildcard() throws Exception {
    Device device = createDevice("v5-wild", "v5-wild-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-wild", "v5-wild-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);
    io.netty.handler.codec.mqtt.MqttProperties properties =
        new io.netty.handler.codec.mqtt.MqttProperties();
    properties.add(
        new io.netty.handler.codec.mqtt.MqttProperties.StringProperty(
            io.netty.handler.codec.mqtt.MqttProperties.RESPONSE_TOPIC, "replies/+/x"));
    raw.send(
        MqttMessageBuilders.publish()
            .topicName(TELEMETRY)
            .qos(MqttQoS.AT_LEAST_ONCE)
            .messageId(1)
            .properties(properties)
            .payload(Unpooled.copiedBuffer("{\"w\":1}", StandardCharsets.UTF_8))
            .build());
    assertThat(raw.disconnectReason()).isEqualTo(0x82);
    assertThat(rows(device)).isZero();
  }

  @Test
  void should_disconnect_with_0x93_when_qos_1_publishes_exceed_receive_maximum() throws Exception {
    createDevice("v5-flood", "v5-flood-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-flood", "v5-flood-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);
    // 101 QoS 1 PUBLISHes in one write, before any PUBACK can have come back: one more than the
    // Receive Maximum (100) the server announced. Small enough (a topic alias, 17 bytes each) for
    // the server to read them at once, before any of them is stored.
    List<io.netty.handler.codec.mqtt.MqttMessage> flood = new ArrayList<>();
    for (int id = 1; id <= 101; id++) {
      flood.add(aliasedPublish(id == 1 ? TELEMETRY : "", 1, id, "{\"f\":1}"));
    }
    raw.sendAll(flood);
    int pubAcks = 0;
    int disconnect = -1;
    while (disconnect < 0 && pubAcks < 101) {
      byte[] packet = raw.readPacket();
      if ((packet[0] & 0xF0) == 0xE0) {
        disconnect = packet.length > 1 ? packet[1] & 0xFF : 0x00;
      } else {
        pubAcks++;
      }
    }
    assertThat(disconnect).as("DISCONNECT reason after %d PUBACKs", pubAcks).isEqualTo(0x93);
    assertThat(pubAcks).isLessThanOrEqualTo(100);
  }

  @Test
  void should_disconnect_with_0x81_on_a_malformed_packet_while_a_311_client_is_served()
      throws Exception {
    createDevice("v5-garbled", "v5-garbled-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-garbled", "v5-garbled-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);
    // A PUBLISH with QoS 3, which does not exist.
    raw.out.write(new byte[] {0x36, 0x06, 0x00, 0x01, 'x', 0x00, 0x01, 0x00});
    raw.out.flush();
    assertThat(raw.disconnectReason()).isEqualTo(0x81);
    // The bystander (MQTT 3.1.1, same listener) is checked after the test.
  }

  @Test
  void should_use_topic_aliases_the_client_defines() throws Exception {
    Device device = createDevice("v5-alias", "v5-alias-token");
    RawV5 raw = new RawV5(socket());
    raw.send(v5Connect("v5-alias", "v5-alias-token"));
    assertThat(raw.readPacket()[0] & 0xF0).isEqualTo(0x20);

    raw.send(aliasedPublish(TELEMETRY, 3, 1, "{\"x\":1}"));
    raw.send(aliasedPublish("", 3, 2, "{\"x\":2}"));

    assertThat(raw.readPubAck()).containsExactly(0, 1, 0x00);
    assertThat(raw.readPubAck()).containsExactly(0, 2, 0x00);
    assertThat(rows(device)).isEqualTo(2);
    // An alias above the Topic Alias Maximum (16) ends the connection with 0x94.
    raw.send(aliasedPublish(TELEMETRY, 17, 3, "{\"x\":3}"));
    assertThat(raw.disconnectReason()).isEqualTo(0x94);
  }

  @Test
  void should_keep_a_session_for_its_expiry_interval_and_cap_it() {
    createDevice("v5-sleeper", "v5-sleeper-token");
    Mqtt5ConnAck first =
        hivemq("v5-sleeper")
            .connectWith()
            .cleanStart(true)
            .sessionExpiryInterval(0xFFFFFFFFL)
            .simpleAuth()
            .username("v5-sleeper-token")
            .applySimpleAuth()
            .send();
    // Asked for "never": granted session-expiry (1 hour), said in CONNACK.
    assertThat(first.getSessionExpiryInterval()).hasValue(3600);
    Mqtt5BlockingClient second = hivemq("v5-sleeper");
    // The first connection is taken over; its session is resumed.
    Mqtt5ConnAck resumed =
        second
            .connectWith()
            .cleanStart(false)
            .sessionExpiryInterval(300)
            .simpleAuth()
            .username("v5-sleeper-token")
            .applySimpleAuth()
            .send();
    assertThat(resumed.isSessionPresent()).isTrue();
    assertThat(resumed.getSessionExpiryInterval()).isEmpty();
    second.disconnectWith().sessionExpiryInterval(0).send();

    Mqtt5BlockingClient third = hivemq("v5-sleeper");
    Mqtt5ConnAck fresh =
        third
            .connectWith()
            .cleanStart(false)
            .simpleAuth()
            .username("v5-sleeper-token")
            .applySimpleAuth()
            .send();
    // The DISCONNECT set the expiry to 0: the session ended with that connection.
    assertThat(fresh.isSessionPresent()).isFalse();
    third.disconnect();
  }

  @Test
  void should_tell_the_older_connection_it_was_taken_over_with_0x8e() {
    createDevice("v5-twin", "v5-twin-token");
    AtomicReference<Throwable> cause = new AtomicReference<>();
    Mqtt5AsyncClient older =
        Mqtt5Client.builder()
            .identifier("v5-twin-a")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .addDisconnectedListener(context -> cause.set(context.getCause()))
            .buildAsync();
    older.connectWith().simpleAuth().username("v5-twin-token").applySimpleAuth().send().join();

    Mqtt5BlockingClient newer = hivemq("v5-twin-b");
    newer.connectWith().simpleAuth().username("v5-twin-token").applySimpleAuth().send();

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(cause.get())
                    .isInstanceOfSatisfying(
                        Mqtt5DisconnectException.class,
                        e ->
                            assertThat(e.getMqttMessage().getReasonCode())
                                .isEqualTo(Mqtt5DisconnectReasonCode.SESSION_TAKEN_OVER)));
    newer.disconnect();
  }

  /**
   * What the ThingsBoard device SDKs do at start-up, with Paho's v5 client: subscribe to the
   * attribute and RPC topics, then ask for the session limits; the in-flight limit they learn is
   * the Receive Maximum of CONNACK. The client's own Maximum Packet Size is honoured: an answer
   * larger than it is not sent, a smaller one after it is.
   */
  @Test
  void should_serve_the_thingsboard_sdk_start_up_over_paho_v5() throws Exception {
    createDevice("v5-sdk", "v5-sdk-token");
    MqttAsyncClient paho =
        new MqttAsyncClient("tcp://127.0.0.1:" + mqttPort(), "v5-sdk", new MemoryPersistence());
    List<String> answers = new CopyOnWriteArrayList<>();
    paho.setCallback(new AnswerCollector(answers));
    MqttConnectionOptions options = new MqttConnectionOptions();
    options.setUserName("v5-sdk-token");
    options.setCleanStart(true);
    IMqttToken connected = paho.connect(options);
    connected.waitForCompletion(10_000);
    MqttProperties connAck = connected.getResponseProperties();
    int receiveMaximum = connAck.getReceiveMaximum();

    IMqttToken subscribed =
        paho.subscribe(
            new String[] {
              "v1/devices/me/attributes",
              "v1/devices/me/attributes/response/+",
              "v1/devices/me/rpc/request/+",
              "v1/devices/me/rpc/response/+",
              "some/other/#"
            },
            new int[] {1, 1, 1, 1, 1});
    subscribed.waitForCompletion(10_000);
    assertThat(subscribed.getReasonCodes()).containsExactly(1, 1, 1, 1, 0x8F);

    paho.publish(
            "v1/devices/me/rpc/request/1",
            new MqttMessage("{\"method\":\"getSessionLimits\",\"params\":{}}".getBytes()))
        .waitForCompletion(10_000);
    await().atMost(Duration.ofSeconds(10)).until(() -> !answers.isEmpty());
    JsonNode limits = JSON.readTree(answers.get(0).substring(answers.get(0).indexOf(' ') + 1));
    assertThat(limits.get("maxInflightMessages").asInt()).isEqualTo(receiveMaximum);
    assertThat(limits.get("maxPayloadSize").asInt()).isEqualTo(65536);
    paho.disconnect().waitForCompletion(10_000);
    paho.close();
  }

  @Test
  void should_not_send_an_answer_larger_than_the_clients_maximum_packet_size() throws Exception {
    createDevice("v5-tiny", "v5-tiny-token");
    MqttAsyncClient paho =
        new MqttAsyncClient("tcp://127.0.0.1:" + mqttPort(), "v5-tiny", new MemoryPersistence());
    List<String> answers = new CopyOnWriteArrayList<>();
    paho.setCallback(new AnswerCollector(answers));
    MqttConnectionOptions options = new MqttConnectionOptions();
    options.setUserName("v5-tiny-token");
    options.setMaximumPacketSize(100L);
    paho.connect(options).waitForCompletion(10_000);
    paho.subscribe("v1/devices/me/rpc/response/+", 0).waitForCompletion(10_000);

    // getSessionLimits' answer is larger than 100 bytes, getCurrentTime's is not; answers go out
    // in order, so receiving the second answer alone shows the first was withheld.
    paho.publish(
            "v1/devices/me/rpc/request/1",
            new MqttMessage("{\"method\":\"getSessionLimits\"}".getBytes()))
        .waitForCompletion(10_000);
    paho.publish(
            "v1/devices/me/rpc/request/2",
            new MqttMessage("{\"method\":\"getCurrentTime\"}".getBytes()))
        .waitForCompletion(10_000);

    await().atMost(Duration.ofSeconds(10)).until(() -> !answers.isEmpty());
    assertThat(answers.get(0)).startsWith("v1/devices/me/rpc/response/2 ");
    paho.disconnect().waitForCompletion(10_000);
    paho.close();
  }

  private Mqtt5BlockingClient hivemq(String id) {
    return Mqtt5Client.builder()
        .identifier(id)
        .serverHost("127.0.0.1")
        .serverPort(mqttPort())
        .buildBlocking();
  }

  private static Mqtt5PublishResult publish(
      Mqtt5BlockingClient client, String topic, String payload) {
    return client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  private static Mqtt5PubAckReasonCode pubAckCode(Mqtt5PublishResult result) {
    return ((Mqtt5PublishResult.Mqtt5Qos1Result) result).getPubAck().getReasonCode();
  }

  private JsonNode readJson(String path) {
    try {
      String body = "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}";
      String jwt = JSON.readTree(post("/api/auth/login", null, body).body()).get("token").asText();
      return JSON.readTree(get(path, jwt).body());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static io.netty.handler.codec.mqtt.MqttMessage v5Connect(String clientId, String token) {
    return MqttMessageBuilders.connect()
        .protocolVersion(MqttVersion.MQTT_5)
        .clientId(clientId)
        .cleanSession(true)
        .hasUser(true)
        .username(token)
        .keepAlive(60)
        .build();
  }

  /** A QoS 1 telemetry PUBLISH whose JSON payload is {@code payloadBytes} long. */
  private static io.netty.handler.codec.mqtt.MqttMessage paddedPublish(
      int packetId, int payloadBytes) {
    String payload = "{\"p\":\"" + "x".repeat(payloadBytes - 8) + "\"}";
    return MqttMessageBuilders.publish()
        .topicName(TELEMETRY)
        .qos(MqttQoS.AT_LEAST_ONCE)
        .messageId(packetId)
        .payload(Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8))
        .build();
  }

  private static void writeString(ByteArrayOutputStream out, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    out.write(bytes.length >> 8);
    out.write(bytes.length & 0xFF);
    out.write(bytes, 0, bytes.length);
  }

  private static io.netty.handler.codec.mqtt.MqttMessage qos2(int packetId) {
    return MqttMessageBuilders.publish()
        .topicName(TELEMETRY)
        .qos(MqttQoS.EXACTLY_ONCE)
        .messageId(packetId)
        .payload(Unpooled.copiedBuffer("{\"q\":2}", StandardCharsets.UTF_8))
        .build();
  }

  private static io.netty.handler.codec.mqtt.MqttMessage aliasedPublish(
      String topic, int alias, int packetId, String payload) {
    io.netty.handler.codec.mqtt.MqttProperties properties =
        new io.netty.handler.codec.mqtt.MqttProperties();
    properties.add(
        new io.netty.handler.codec.mqtt.MqttProperties.IntegerProperty(
            io.netty.handler.codec.mqtt.MqttProperties.TOPIC_ALIAS, alias));
    return MqttMessageBuilders.publish()
        .topicName(topic)
        .qos(MqttQoS.AT_LEAST_ONCE)
        .messageId(packetId)
        .properties(properties)
        .payload(Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8))
        .build();
  }

  /** Answers on {@code v1/devices/me/rpc/response/+} as "topic payload" lines. */
  private record AnswerCollector(List<String> answers)
      implements org.eclipse.paho.mqttv5.client.MqttCallback {
    @Override
    public void messageArrived(String topic, MqttMessage message) {
      answers.add(topic + " " + new String(message.getPayload(), StandardCharsets.UTF_8));
    }

    @Override
    public void disconnected(org.eclipse.paho.mqttv5.client.MqttDisconnectResponse response) {}

    @Override
    public void mqttErrorOccurred(org.eclipse.paho.mqttv5.common.MqttException exception) {}

    @Override
    public void deliveryComplete(IMqttToken token) {}

    @Override
    public void connectComplete(boolean reconnect, String serverURI) {}

    @Override
    public void authPacketArrived(int reasonCode, MqttProperties properties) {}
  }

  /**
   * A raw MQTT 5 connection: packets encoded by Netty's encoder (which switches to MQTT 5 once it
   * has encoded a v5 CONNECT), answers read as bytes.
   */
  private static final class RawV5 {
    private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
    private final OutputStream out;
    private final DataInputStream in;

    RawV5(Socket socket) throws IOException {
      this.out = socket.getOutputStream();
      this.in = new DataInputStream(socket.getInputStream());
    }

    void send(io.netty.handler.codec.mqtt.MqttMessage message) throws IOException {
      sendAll(List.of(message));
    }

    /** Encodes every message and writes them all at once. */
    void sendAll(List<io.netty.handler.codec.mqtt.MqttMessage> messages) throws IOException {
      for (io.netty.handler.codec.mqtt.MqttMessage message : messages) {
        encoder.writeOutbound(message);
      }
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      ByteBuf encoded;
      while ((encoded = encoder.readOutbound()) != null) {
        byte[] chunk = new byte[encoded.readableBytes()];
        encoded.readBytes(chunk);
        encoded.release();
        bytes.write(chunk);
      }
      out.write(bytes.toByteArray());
      out.flush();
    }

    /** One packet: its first byte, then its body. */
    byte[] readPacket() throws IOException {
      int first = in.readUnsignedByte();
      int length = 0;
      int shift = 0;
      int digit;
      do {
        digit = in.readUnsignedByte();
        length |= (digit & 0x7F) << shift;
        shift += 7;
      } while ((digit & 0x80) != 0);
      byte[] packet = new byte[length + 1];
      packet[0] = (byte) first;
      in.readFully(packet, 1, length);
      return packet;
    }

    /** A PUBACK's packet id (two bytes) and reason code (0x00 when the short form is used). */
    int[] readPubAck() throws IOException {
      byte[] packet = readPacket();
      assertThat(packet[0] & 0xF0).isEqualTo(0x40);
      int code = packet.length > 3 ? packet[3] & 0xFF : 0x00;
      return new int[] {packet[1] & 0xFF, packet[2] & 0xFF, code};
    }

    /** Skips acknowledgements until a DISCONNECT; its reason code. */
    int disconnectReason() throws IOException {
      while (true) {
        byte[] packet = readPacket();
        if ((packet[0] & 0xF0) == 0xE0) {
          return packet.length > 1 ? packet[1] & 0xFF : 0x00;
        }
      }
    }
  }
}
