package io.fieldline.transport.mqtt.v5;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * MQTT 5 sessions driven through the production pipeline in an EmbeddedChannel; answers are read as
 * bytes ({@code type:reason} per packet) since the test decoder speaks 3.1.1.
 */
class SessionMqtt5Test extends SessionHandlerTestBase {

  private static final String TELEMETRY = SessionClient.TELEMETRY;

  @Test
  void should_not_announce_retain_unavailable_in_connack() throws IOException {
    SessionClient client = open(fixture());
    client.send(connect("c5"));

    byte[] connAck = client.receivedBytes();
    // Property 0x25 (Retain Available) absent: the retain flag is accepted (docs/mqtt-api.md).
    assertThat(propertyIds(connAck, 5)).contains(0x21, 0x22, 0x27).doesNotContain(0x25);
  }

  @Test
  void should_close_as_malformed_when_inner_lengths_outrun_the_packet() {
    SessionFixture fixture = fixture("max-packet-size = 1024");
    SessionClient client = open(fixture);
    client.send(connect("c5"));
    client.receivedBytes();

    // PUBLISH, remaining length 20, topic "t", then a Property Length of 268,435,455: Netty's
    // decoder would wait for (and keep) that many bytes.
    client.sendBytes(0x30, 0x14, 0x00, 0x01, 't', 0xFF, 0xFF, 0xFF, 0x7F);
    for (int i = 0; i < 3 && client.isOpen(); i++) {
      client.channel.writeInbound(Unpooled.wrappedBuffer(userProperties(600)));
    }

    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.rejected("malformed")).isEqualTo(1);
  }

  @Test
  void should_end_the_qos2_exchange_after_an_error_pubrec() throws IOException {
    SessionFixture fixture = fixture();
    SessionClient client = open(fixture);
    client.send(connect("c5"));
    client.receivedBytes();

    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{not json"));
    fixture.deadLetters.writes().forEach(write -> write.done().complete(null));
    assertThat(packets(client.receivedBytes())).containsExactly("PUBREC:99");
    // The exchange ended with the error PUBREC: the id is not awaiting release.
    client.send(pubrel(7));
    assertThat(packets(client.receivedBytes())).containsExactly("PUBCOMP:92");
  }

  @Test
  void should_count_only_this_connections_qos_2_exchanges_against_receive_maximum()
      throws IOException {
    SessionFixture fixture = fixture("max-inflight = 3", "inflight-low-water = 1");
    SessionClient first = open(fixture);
    first.send(persistentConnect("c5"));
    first.receivedBytes();
    // Three QoS 2 exchanges left open (PUBREC, no PUBREL) on a session that outlives the
    // connection.
    for (int id = 1; id <= 3; id++) {
      first.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, id, "{\"a\":1}"));
      fixture.gateway.submission(id - 1).store();
    }
    assertThat(packets(first.receivedBytes()))
        .containsExactly("PUBREC:00", "PUBREC:00", "PUBREC:00");
    first.close();

    SessionClient second = open(fixture);
    second.send(persistentConnect("c5"));
    second.receivedBytes();
    // The earlier connection's open exchanges do not count on this one (MQTT 5 §4.9).
    second.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 10, "{\"b\":1}"));
    fixture.gateway.submission(3).store();
    assertThat(packets(second.receivedBytes())).containsExactly("PUBACK:00");
    // This connection's own: three QoS 2 exchanges open reach the Receive Maximum (3)...
    for (int id = 11; id <= 13; id++) {
      second.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, id, "{\"c\":1}"));
      fixture.gateway.submission(id - 7).store();
    }
    assertThat(packets(second.receivedBytes()))
        .containsExactly("PUBREC:00", "PUBREC:00", "PUBREC:00");
    assertThat(second.isOpen()).isTrue();
    // ...and one more QoS 1 is one too many.
    second.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 14, "{\"d\":1}"));

    assertThat(packets(second.receivedBytes())).containsExactly("DISCONNECT:93");
    assertThat(second.isOpen()).isFalse();
    assertThat(fixture.rejected("receive_maximum")).isEqualTo(1);
  }

  @Test
  void should_refuse_a_connect_or_will_property_given_twice_however_the_bytes_arrive()
      throws IOException {
    // Session Expiry Interval (0x11) twice in CONNECT; then Content Type (0x03) twice in the Will.
    int[] connectProperties = {10, 0x11, 0, 0, 0, 5, 0x11, 0, 0, 0, 6};
    int[] willProperties = {8, 0x03, 0, 1, 'a', 0x03, 0, 1, 'b'};
    for (int[] repeatedIn : List.of(connectProperties, willProperties)) {
      boolean will = repeatedIn == willProperties;
      SessionClient client = open(fixture());
      int[] bytes =
          rawConnect(will ? new int[] {0} : connectProperties, will ? willProperties : null);
      // One byte per read: the property scan must follow a CONNECT split anywhere.
      for (int b : bytes) {
        client.sendBytes(b);
      }
      assertThat(packets(client.receivedBytes()))
          .as("will: %s", will)
          .containsExactly("CONNACK:82");
      assertThat(client.isOpen()).isFalse();
    }
    // User Property (0x26) may repeat.
    SessionClient client = open(fixture());
    client.sendBytes(
        rawConnect(new int[] {10, 0x26, 0, 1, 'k', 0, 1, 'v', 0x26, 0, 1, 'k', 0, 1, 'w'}, null));
    assertThat(packets(client.receivedBytes())).containsExactly("CONNACK:00");
  }

  @Test
  void should_refuse_a_will_whose_response_topic_holds_a_wildcard() throws IOException {
    MqttProperties will = new MqttProperties();
    will.add(new MqttProperties.StringProperty(MqttProperties.RESPONSE_TOPIC, "replies/#"));
    SessionClient client = open(fixture());

    client.send(
        MqttMessageBuilders.connect()
            .protocolVersion(MqttVersion.MQTT_5)
            .clientId("c5")
            .cleanSession(true)
            .hasUser(true)
            .username(TOKEN)
            .willFlag(true)
            .willTopic("w")
            .willMessage(new byte[] {1})
            .willProperties(will)
            .build());

    assertThat(packets(client.receivedBytes())).containsExactly("CONNACK:82");
    assertThat(client.isOpen()).isFalse();
  }

  // An MQTT 5 CONNECT for TOKEN, client id "c5", with these property bytes (length first) and,
  // when given, a Will with these property bytes, topic "w" and payload "x".
  private static int[] rawConnect(int[] properties, int @Nullable [] willProperties) {
    List<Integer> body = new ArrayList<>();
    for (int b : new int[] {0, 4, 'M', 'Q', 'T', 'T', 5}) {
      body.add(b);
    }
    body.add(0x82 | (willProperties == null ? 0 : 0x04));
    body.add(0);
    body.add(60);
    for (int b : properties) {
      body.add(b);
    }
    addString(body, "c5");
    if (willProperties != null) {
      for (int b : willProperties) {
        body.add(b);
      }
      addString(body, "w");
      addString(body, "x");
    }
    addString(body, TOKEN);
    int[] packet = new int[body.size() + 2];
    packet[0] = 0x10;
    packet[1] = body.size();
    for (int i = 0; i < body.size(); i++) {
      packet[i + 2] = body.get(i);
    }
    return packet;
  }

  private static void addString(List<Integer> out, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    out.add(bytes.length >> 8);
    out.add(bytes.length & 0xFF);
    for (byte b : bytes) {
      out.add(b & 0xFF);
    }
  }

  @Test
  void should_disconnect_with_0x93_when_qos_1_publishes_exceed_receive_maximum()
      throws IOException {
    SessionFixture fixture = fixture("max-inflight = 3", "inflight-low-water = 1");
    SessionClient client = open(fixture);
    client.send(connect("c5"));
    client.receivedBytes();

    // Three QoS 1 PUBLISHes not yet stored reach the Receive Maximum (3); the fourth, sent before
    // any PUBACK, is read (not left unread behind a paused socket) and is one too many.
    for (int id = 1; id <= 4; id++) {
      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, id, "{\"a\":1}"));
    }

    assertThat(packets(client.receivedBytes())).containsExactly("DISCONNECT:93");
    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.rejected("receive_maximum")).isEqualTo(1);
  }

  @Test
  void should_answer_protocol_error_for_an_empty_topic_without_alias_and_an_undefined_alias()
      throws IOException {
    for (MqttMessage bad :
        List.of(publish("", MqttQoS.AT_LEAST_ONCE, 1, "{}"), aliased("", 5, 1))) {
      SessionClient client = open(fixture());
      client.send(connect("c5"));
      client.receivedBytes();

      client.send(bad);

      assertThat(packets(client.receivedBytes())).containsExactly("DISCONNECT:82");
      assertThat(client.isOpen()).isFalse();
    }
  }

  @Test
  void should_answer_topic_alias_invalid_for_alias_zero() throws IOException {
    SessionClient client = open(fixture());
    client.send(connect("c5"));
    client.receivedBytes();

    client.send(aliased(TELEMETRY, 0, 1));

    assertThat(packets(client.receivedBytes())).containsExactly("DISCONNECT:94");
  }

  @Test
  void should_close_as_malformed_when_a_topic_holds_u0000() throws IOException {
    SessionFixture fixture = fixture();
    SessionClient client = open(fixture);
    client.send(connect("c5"));
    client.receivedBytes();

    client.send(publish("v1/devices/me/telemetry\u0000", MqttQoS.AT_LEAST_ONCE, 1, "{}"));

    assertThat(packets(client.receivedBytes())).containsExactly("DISCONNECT:81");
    assertThat(fixture.deadLetters.writes()).isEmpty();
  }

  private static MqttMessage connect(String clientId) {
    return MqttMessageBuilders.connect()
        .protocolVersion(MqttVersion.MQTT_5)
        .clientId(clientId)
        .cleanSession(true)
        .hasUser(true)
        .username(TOKEN)
        .keepAlive(60)
        .build();
  }

  // Clean Start 0, Session Expiry Interval 300 s: the session outlives the connection.
  private static MqttMessage persistentConnect(String clientId) {
    MqttProperties properties = new MqttProperties();
    properties.add(new MqttProperties.IntegerProperty(MqttProperties.SESSION_EXPIRY_INTERVAL, 300));
    return MqttMessageBuilders.connect()
        .protocolVersion(MqttVersion.MQTT_5)
        .clientId(clientId)
        .cleanSession(false)
        .hasUser(true)
        .username(TOKEN)
        .keepAlive(60)
        .properties(properties)
        .build();
  }

  private static MqttMessage publish(String topic, MqttQoS qos, int packetId, String payload) {
    return MqttMessageBuilders.publish()
        .topicName(topic)
        .qos(qos)
        .messageId(packetId)
        .payload(Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8))
        .build();
  }

  private static MqttMessage aliased(String topic, int alias, int packetId) {
    MqttProperties properties = new MqttProperties();
    properties.add(new MqttProperties.IntegerProperty(MqttProperties.TOPIC_ALIAS, alias));
    return MqttMessageBuilders.publish()
        .topicName(topic)
        .qos(MqttQoS.AT_LEAST_ONCE)
        .messageId(packetId)
        .properties(properties)
        .payload(Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8))
        .build();
  }

  private static MqttMessage pubrel(int packetId) {
    return new MqttMessage(
        new MqttFixedHeader(MqttMessageType.PUBREL, false, MqttQoS.AT_LEAST_ONCE, false, 0),
        new MqttPubReplyMessageVariableHeader(packetId, (byte) 0, MqttProperties.NO_PROPERTIES));
  }

  // User Property records (id 0x26, two 1-character strings) filling count × 7 bytes.
  private static byte[] userProperties(int count) {
    byte[] bytes = new byte[count * 7];
    for (int i = 0; i < count; i++) {
      int at = i * 7;
      bytes[at] = 0x26;
      bytes[at + 2] = 1;
      bytes[at + 3] = 'k';
      bytes[at + 5] = 1;
      bytes[at + 6] = 'v';
    }
    return bytes;
  }

  /** Each packet as "TYPE:reason" (reason code in hex, 00 when the short form leaves it out). */
  private static List<String> packets(byte[] bytes) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    List<String> packets = new ArrayList<>();
    while (in.available() > 0) {
      int first = in.readUnsignedByte();
      int length = remainingLength(in);
      byte[] body = new byte[length];
      in.readFully(body);
      MqttMessageType type = MqttMessageType.valueOf(first >> 4);
      int reasonAt =
          switch (type) {
            case PUBACK, PUBREC, PUBREL, PUBCOMP -> 2;
            case CONNACK -> 1;
            default -> 0;
          };
      int reason = body.length > reasonAt ? body[reasonAt] & 0xFF : 0;
      packets.add(type.name() + ":" + String.format("%02x", reason));
    }
    return packets;
  }

  // The ids of the properties of a v5 CONNACK (flags, code, then properties).
  private static List<Integer> propertyIds(byte[] connAck, int propertiesStart) {
    List<Integer> ids = new ArrayList<>();
    int end = connAck.length;
    int at = propertiesStart;
    while (at < end) {
      int id = connAck[at] & 0xFF;
      ids.add(id);
      at +=
          1
              + switch (id) {
                case 0x21, 0x22, 0x13 -> 2;
                case 0x11, 0x27 -> 4;
                case 0x12, 0x1F -> 2 + (((connAck[at + 1] & 0xFF) << 8) | (connAck[at + 2] & 0xFF));
                default -> 1;
              };
    }
    return ids;
  }

  private static int remainingLength(DataInputStream in) throws IOException {
    int length = 0;
    int shift = 0;
    int digit;
    do {
      digit = in.readUnsignedByte();
      length |= (digit & 0x7F) << shift;
      shift += 7;
    } while ((digit & 0x80) != 0);
    return length;
  }
}
