package io.fieldline.server.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Client packets of one protocol version built from fuzz data: every packet type a client sends
 * (and a few it must not), with the fields, flags, properties and payloads the fuzzer chooses. The
 * structure keeps most mutations inside a packet that still frames, so that they reach the session
 * and the publish path rather than only the decoder's first checks; a packet now and then gets
 * reserved flag bits, a remaining length that disagrees with its body, one over the maximum packet
 * size or a malformed variable byte integer. When the fuzz data runs out every choice falls back to
 * its first, well-formed option. Confined to the thread building one lane.
 */
final class FuzzedPackets {

  /** What a packet is. */
  private enum Kind {
    PUBLISH,
    PUBLISH_QOS1,
    PINGREQ,
    PUBLISH_QOS2,
    PUBREL,
    SUBSCRIBE,
    UNSUBSCRIBE,
    PUBACK,
    PUBREC,
    PUBCOMP,
    CONNECT,
    DISCONNECT,
    AUTH,
    SERVER_ONLY,
    RAW
  }

  /**
   * The choice of the next packet, weighted: most are packets a session goes on after, so that a
   * lane reaches sequences (QoS 2 flows, subscriptions, publishes after publishes); one in six ends
   * the connection by design. The first entry is the fallback once the fuzz data runs out.
   */
  private static final Kind[] KINDS = weighted();

  static final String TELEMETRY = "v1/devices/me/telemetry";

  private static final String[] TOPICS = {
    TELEMETRY,
    "v1/devices/me/attributes",
    "v1/devices/me/rpc/request/1",
    "v1/devices/me/rpc/response/7",
    "v1/devices/me/attributes/request/3",
    "v1/gateway/telemetry",
    "v1/devices/me/rpc/request/",
    "v1/devices/me/telemetry/",
    "",
    "#",
    "v1/devices/+/telemetry",
  };

  private static final String[] FILTERS = {
    "v1/devices/me/attributes",
    "v1/devices/me/attributes/response/+",
    "v1/devices/me/rpc/request/+",
    "v1/devices/me/rpc/response/+",
    "#",
    "v1/#/x",
    "v1/devices/me/rpc/request/#",
    "",
    "+",
  };

  private static final String[] PAYLOADS = {
    "{\"temperature\":21.5}",
    "{\"ts\":1700000000000,\"values\":{\"a\":1,\"b\":\"x\",\"c\":true}}",
    "[{\"ts\":1,\"values\":{\"k\":1}},{\"ts\":2,\"values\":{\"k\":2.5}}]",
    "{\"k\":1,\"k\":2}",
    "{\"values\":{\"nested\":{\"a\":[1,2,{\"b\":null}]}}}",
    "{\"method\":\"getTime\",\"params\":{}}",
    "{\"clientKeys\":\"a,b\",\"sharedKeys\":\"c\"}",
    "{}",
    "[]",
    "{\"temperature\": 21.5,",
    "{\"ts\":-1,\"values\":{\"x\":1e999}}",
    "\"text\"",
  };

  private final FuzzedDataProvider data;
  private final Version version;
  private int lastPacketId = 1;
  private int pingreqs;
  private boolean framed = true;

  FuzzedPackets(FuzzedDataProvider data, Version version) {
    this.data = data;
    this.version = version;
  }

  /** How many well-formed PINGREQs were built: the PINGRESPs a live session owes. */
  int pingreqs() {
    return pingreqs;
  }

  /**
   * Whether every length in every packet built so far agrees with what follows it. The server then
   * reads each packet whole and must answer the lane's last PINGREQ or close the connection;
   * otherwise it may rightly wait for bytes that never come.
   */
  boolean framed() {
    return framed;
  }

  /** The next packet, as the fuzz data chooses it. */
  byte[] next() {
    Kind kind = data.pickValue(KINDS);
    // 0-59 as built, 60 reserved flag bits, 61 a length off by a few bytes, 62 a length over the
    // maximum packet size, 63 a malformed remaining length.
    int shape = data.consumeInt(0, 63);
    byte[] packet = build(kind);
    if (shape < 60 || kind == Kind.RAW) {
      if (kind == Kind.PINGREQ) {
        pingreqs++;
      }
      return packet;
    }
    int bodyStart = bodyStart(packet);
    byte[] body = Arrays.copyOfRange(packet, bodyStart, packet.length);
    return switch (shape) {
      case 60 -> MqttWriter.packet((packet[0] & 0xf0) | data.consumeInt(0, 15), body);
      case 61 -> {
        framed = false;
        yield MqttWriter.packet(packet[0], Math.max(0, body.length + data.consumeInt(-4, 4)), body);
      }
      case 62 ->
          MqttWriter.packet(
              packet[0], data.consumeInt(65_537, MqttWriter.MAX_REMAINING_LENGTH), body);
      default ->
          new MqttWriter()
              .u8(packet[0])
              .u8(0xff)
              .u8(0xff)
              .u8(0xff)
              .u8(0xff)
              .u8(0x7f)
              .bytes(body)
              .toByteArray();
    };
  }

  /** A CONNECT with the fuzzer's choice of every field: flags, will, properties, identity. */
  byte[] fuzzedConnect(String token) {
    MqttWriter body = new MqttWriter();
    if (data.consumeInt(0, 7) == 7) {
      // Another name or level than the version's: the decoder then reads the rest by other rules.
      framed = false;
      body.string(data.consumeString(8)).u8(data.consumeInt(0, 255));
    } else {
      body.string(version.protocolName()).u8(version.level());
    }
    int flags = data.consumeInt(0, 255);
    body.u8(flags);
    body.u16(data.consumeInt(0, 0xffff));
    properties(body, Mqtt5Properties.CONNECT);
    body.string(data.consumeBoolean() ? data.consumeString(32) : "fuzz-connect");
    if ((flags & 0x04) != 0) {
      properties(body, Mqtt5Properties.WILL);
      body.string(topic());
      body.binary(payload());
    }
    if ((flags & 0x80) != 0) {
      body.string(data.consumeBoolean() ? token : data.consumeString(40));
    }
    if ((flags & 0x40) != 0) {
      body.binary(data.consumeBytes(data.consumeInt(0, 32)));
    }
    return MqttWriter.packet(0x10, body.toByteArray());
  }

  /** The CONNECT a well-behaved device of this version sends, with fuzzed MQTT 5 properties. */
  byte[] connect(String clientId, String token) {
    MqttWriter body = new MqttWriter().string(version.protocolName()).u8(version.level());
    body.u8(0x82); // user name, clean session
    body.u16(60);
    properties(body, Mqtt5Properties.CONNECT);
    body.string(clientId).string(token);
    return MqttWriter.packet(0x10, body.toByteArray());
  }

  static byte[] pingreq() {
    return new byte[] {(byte) 0xc0, 0};
  }

  private byte[] build(Kind kind) {
    return switch (kind) {
      case PUBLISH -> publish(0);
      case PUBLISH_QOS1 -> publish(1);
      case PUBLISH_QOS2 -> publish(2);
      case PINGREQ -> pingreq();
      case PUBREL -> ack(0x62, Mqtt5Properties.ACK);
      case PUBACK -> ack(0x40, Mqtt5Properties.ACK);
      case PUBREC -> ack(0x50, Mqtt5Properties.ACK);
      case PUBCOMP -> ack(0x70, Mqtt5Properties.ACK);
      case SUBSCRIBE -> subscribe();
      case UNSUBSCRIBE -> unsubscribe();
      case CONNECT -> fuzzedConnect(data.consumeString(40));
      case DISCONNECT -> disconnectOrAuth(0xe0, Mqtt5Properties.DISCONNECT);
      case AUTH -> disconnectOrAuth(0xf0, Mqtt5Properties.AUTH);
      case SERVER_ONLY -> serverOnly();
      case RAW -> raw();
    };
  }

  /** An MQTT 5 property block (nothing in 3.1.1). */
  private void properties(MqttWriter body, List<Mqtt5Properties.Property> allowed) {
    if (version == Version.MQTT_5 && !Mqtt5Properties.write(body, data, allowed)) {
      framed = false;
    }
  }

  private byte[] publish(int qos) {
    int flags = (qos << 1) | (data.consumeBoolean() ? 0x08 : 0) | (data.consumeBoolean() ? 1 : 0);
    MqttWriter body = new MqttWriter();
    String topic = topic();
    if (version == Version.MQTT_5 && data.consumeInt(0, 7) == 7) {
      topic = ""; // the topic comes from an alias, if the properties carry one
    }
    body.string(topic);
    if (qos > 0) {
      body.u16(packetId());
    }
    properties(body, Mqtt5Properties.PUBLISH);
    body.bytes(payload());
    return MqttWriter.packet(0x30 | flags, body.toByteArray());
  }

  /** PUBACK, PUBREC, PUBREL or PUBCOMP; MQTT 5 may add a reason code and properties. */
  private byte[] ack(int firstByte, List<Mqtt5Properties.Property> properties) {
    MqttWriter body = new MqttWriter().u16(data.consumeBoolean() ? packetId() : lastPacketId);
    if (version == Version.MQTT_5 && data.consumeBoolean()) {
      body.u8(data.consumeBoolean() ? 0x00 : data.consumeInt(0, 255));
      if (data.consumeBoolean()) {
        properties(body, properties);
      }
    }
    return MqttWriter.packet(firstByte, body.toByteArray());
  }

  private byte[] subscribe() {
    MqttWriter body = new MqttWriter().u16(packetId());
    properties(body, Mqtt5Properties.SUBSCRIBE);
    // MQTT 3.1.1 §3.8.3: at least one filter; none is a protocol violation.
    int filters = data.consumeInt(1, 4) - (data.consumeInt(0, 15) == 15 ? 1 : 0);
    for (int i = 0; i < filters; i++) {
      body.string(filter());
      // 3.1.1: requested QoS, reserved bits 0. 5: QoS, no local, retain as published, retain
      // handling (3 is reserved) and reserved bits (MQTT 5 §3.8.3.1).
      body.u8(data.consumeInt(0, 7) == 7 ? data.consumeInt(0, 255) : data.consumeInt(0, 2));
    }
    return MqttWriter.packet(0x82, body.toByteArray());
  }

  private byte[] unsubscribe() {
    MqttWriter body = new MqttWriter().u16(packetId());
    properties(body, Mqtt5Properties.UNSUBSCRIBE);
    int filters = data.consumeInt(1, 3);
    for (int i = 0; i < filters; i++) {
      body.string(filter());
    }
    return MqttWriter.packet(0xa2, body.toByteArray());
  }

  /** DISCONNECT or AUTH: empty in 3.1.1 (AUTH does not exist there); reason and properties in 5. */
  private byte[] disconnectOrAuth(int firstByte, List<Mqtt5Properties.Property> properties) {
    MqttWriter body = new MqttWriter();
    if (version == Version.MQTT_5 && data.consumeBoolean()) {
      body.u8(data.consumeInt(0, 255));
      properties(body, properties);
    }
    return MqttWriter.packet(firstByte, body.toByteArray());
  }

  /** CONNACK, SUBACK, UNSUBACK or PINGRESP: packets only a server may send. */
  private byte[] serverOnly() {
    return switch (data.consumeInt(0, 3)) {
      case 0 -> new byte[] {0x20, 2, 0, 0};
      case 1 -> new byte[] {(byte) 0x90, 3, 0, 1, 0};
      case 2 -> new byte[] {(byte) 0xb0, 2, 0, 1};
      default -> new byte[] {(byte) 0xd0, 0};
    };
  }

  /**
   * Any first byte and any body, with a remaining length that matches it; the lengths inside the
   * body are whatever the bytes say.
   */
  private byte[] raw() {
    framed = false;
    int firstByte = data.consumeInt(0, 255);
    return MqttWriter.packet(firstByte, data.consumeBytes(data.consumeInt(0, 64)));
  }

  private int packetId() {
    // MQTT 3.1.1 §2.3.1: a packet id is non-zero; 0 now and then.
    lastPacketId = data.consumeInt(0, 31) == 31 ? 0 : 1 + data.consumeInt(0, 0xfffe);
    return lastPacketId;
  }

  private String topic() {
    return data.consumeInt(0, 7) == 7 ? data.consumeString(48) : data.pickValue(TOPICS);
  }

  private String filter() {
    return data.consumeInt(0, 7) == 7 ? data.consumeString(48) : data.pickValue(FILTERS);
  }

  private byte[] payload() {
    return switch (data.consumeInt(0, 7)) {
      case 5 -> data.consumeString(96).getBytes(StandardCharsets.UTF_8);
      case 6 -> data.consumeBytes(data.consumeInt(0, 96));
      case 7 ->
          ("{\"ts\":"
                  + data.consumeLong()
                  + ",\"values\":{\""
                  + data.consumeString(12)
                  + "\":"
                  + data.consumeDouble()
                  + "}}")
              .getBytes(StandardCharsets.UTF_8);
      default -> data.pickValue(PAYLOADS).getBytes(StandardCharsets.UTF_8);
    };
  }

  private static Kind[] weighted() {
    Map<Kind, Integer> weights = new EnumMap<>(Kind.class);
    weights.put(Kind.PUBLISH, 6);
    weights.put(Kind.PUBLISH_QOS1, 6);
    weights.put(Kind.PINGREQ, 2);
    weights.put(Kind.PUBLISH_QOS2, 3);
    weights.put(Kind.PUBREL, 3);
    weights.put(Kind.SUBSCRIBE, 3);
    weights.put(Kind.UNSUBSCRIBE, 2);
    weights.put(Kind.PUBACK, 1);
    weights.put(Kind.PUBREC, 1);
    weights.put(Kind.PUBCOMP, 1);
    weights.put(Kind.CONNECT, 1);
    weights.put(Kind.DISCONNECT, 1);
    weights.put(Kind.AUTH, 1);
    weights.put(Kind.SERVER_ONLY, 1);
    weights.put(Kind.RAW, 2);
    return weights.entrySet().stream()
        .flatMap(e -> Collections.nCopies(e.getValue(), e.getKey()).stream())
        .toArray(Kind[]::new);
  }

  /** Where the body starts: after the first byte and the remaining length's 1 to 4 bytes. */
  private static int bodyStart(byte[] packet) {
    int i = 1;
    while ((packet[i] & 0x80) != 0) {
      i++;
    }
    return i + 1;
  }
}
