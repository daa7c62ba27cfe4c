package io.fieldline.server.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.util.List;

/**
 * MQTT 5 properties (§2.2.2) chosen by the fuzzer: the identifiers a packet type may carry, each
 * written with the value type the specification gives it, and now and then one that the packet type
 * does not allow, an unknown identifier or a value of the wrong shape, so that the decoder's
 * property checks are reached as well as the session's use of the values. Stateless.
 */
final class Mqtt5Properties {

  /** How a property's value is encoded (MQTT 5 §2.2.2.2). */
  enum Type {
    BYTE,
    TWO_BYTE,
    FOUR_BYTE,
    VARINT,
    UTF8,
    BINARY,
    UTF8_PAIR
  }

  /** One property identifier and its value type. */
  enum Property {
    PAYLOAD_FORMAT(0x01, Type.BYTE),
    MESSAGE_EXPIRY(0x02, Type.FOUR_BYTE),
    CONTENT_TYPE(0x03, Type.UTF8),
    RESPONSE_TOPIC(0x08, Type.UTF8),
    CORRELATION_DATA(0x09, Type.BINARY),
    SUBSCRIPTION_ID(0x0B, Type.VARINT),
    SESSION_EXPIRY(0x11, Type.FOUR_BYTE),
    AUTH_METHOD(0x15, Type.UTF8),
    AUTH_DATA(0x16, Type.BINARY),
    REQUEST_PROBLEM_INFO(0x17, Type.BYTE),
    WILL_DELAY(0x18, Type.FOUR_BYTE),
    REQUEST_RESPONSE_INFO(0x19, Type.BYTE),
    SERVER_REFERENCE(0x1C, Type.UTF8),
    REASON_STRING(0x1F, Type.UTF8),
    RECEIVE_MAXIMUM(0x21, Type.TWO_BYTE),
    TOPIC_ALIAS_MAXIMUM(0x22, Type.TWO_BYTE),
    TOPIC_ALIAS(0x23, Type.TWO_BYTE),
    USER_PROPERTY(0x26, Type.UTF8_PAIR),
    MAXIMUM_PACKET_SIZE(0x27, Type.FOUR_BYTE);

    final int id;
    final Type type;

    Property(int id, Type type) {
      this.id = id;
      this.type = type;
    }
  }

  static final List<Property> CONNECT =
      List.of(
          Property.SESSION_EXPIRY,
          Property.RECEIVE_MAXIMUM,
          Property.MAXIMUM_PACKET_SIZE,
          Property.TOPIC_ALIAS_MAXIMUM,
          Property.REQUEST_RESPONSE_INFO,
          Property.REQUEST_PROBLEM_INFO,
          Property.USER_PROPERTY,
          Property.AUTH_METHOD,
          Property.AUTH_DATA);

  static final List<Property> WILL =
      List.of(
          Property.WILL_DELAY,
          Property.PAYLOAD_FORMAT,
          Property.MESSAGE_EXPIRY,
          Property.CONTENT_TYPE,
          Property.RESPONSE_TOPIC,
          Property.CORRELATION_DATA,
          Property.USER_PROPERTY);

  static final List<Property> PUBLISH =
      List.of(
          Property.TOPIC_ALIAS,
          Property.PAYLOAD_FORMAT,
          Property.MESSAGE_EXPIRY,
          Property.CONTENT_TYPE,
          Property.RESPONSE_TOPIC,
          Property.CORRELATION_DATA,
          Property.USER_PROPERTY,
          // Server to client only (MQTT 5 §3.3.2.3.8): a client sending it is a protocol error.
          Property.SUBSCRIPTION_ID);

  static final List<Property> ACK = List.of(Property.REASON_STRING, Property.USER_PROPERTY);

  static final List<Property> SUBSCRIBE = List.of(Property.SUBSCRIPTION_ID, Property.USER_PROPERTY);

  static final List<Property> UNSUBSCRIBE = List.of(Property.USER_PROPERTY);

  static final List<Property> DISCONNECT =
      List.of(
          Property.SESSION_EXPIRY,
          Property.REASON_STRING,
          Property.USER_PROPERTY,
          Property.SERVER_REFERENCE);

  static final List<Property> AUTH =
      List.of(
          Property.AUTH_METHOD, Property.AUTH_DATA, Property.REASON_STRING, Property.USER_PROPERTY);

  private static final Property[] ALL = Property.values();

  private Mqtt5Properties() {}

  /**
   * Writes a property block (its variable byte integer length, then the properties) for a packet
   * type that allows {@code allowed}. Out of fuzz data it writes an empty block.
   *
   * @return whether every length in the block agrees with what follows it: if not, a decoder may
   *     take bytes of the next packet as this one's
   */
  static boolean write(MqttWriter out, FuzzedDataProvider data, List<Property> allowed) {
    MqttWriter block = new MqttWriter();
    boolean framed = true;
    int count = data.consumeInt(0, 4);
    for (int i = 0; i < count; i++) {
      // 0-11 a property of this packet type, 12 any property, 13 an identifier nobody defined,
      // 14 a value of the wrong size, 15 a truncated variable byte integer.
      int shape = data.consumeInt(0, 15);
      if (shape >= 13) {
        framed = false;
      }
      if (shape == 13) {
        block.varint(unknownId(data.consumeInt(0, 127)));
        block.bytes(data.consumeBytes(4));
        continue;
      }
      Property property =
          shape == 12 ? data.pickValue(ALL) : allowed.get(data.consumeInt(0, allowed.size() - 1));
      block.varint(property.id);
      if (shape == 14) {
        block.bytes(data.consumeBytes(data.consumeInt(0, 6)));
      } else if (shape == 15) {
        block.u8(0xff).u8(0xff).u8(0xff).u8(0xff);
      } else {
        value(block, data, property);
      }
    }
    byte[] properties = block.toByteArray();
    // Now and then a length that disagrees with the properties that follow.
    int skew = data.consumeInt(0, 31) == 31 ? data.consumeInt(-4, 4) : 0;
    out.varint(Math.max(0, properties.length + skew)).bytes(properties);
    return framed && skew == 0;
  }

  private static void value(MqttWriter out, FuzzedDataProvider data, Property property) {
    switch (property.type) {
      case BYTE -> out.u8(data.consumeInt(0, 2) == 2 ? data.consumeByte() : data.consumeInt(0, 1));
      case TWO_BYTE ->
          out.u16(property == Property.TOPIC_ALIAS ? topicAlias(data) : data.consumeInt(0, 0xffff));
      case FOUR_BYTE -> out.u32(data.consumeInt());
      case VARINT -> out.varint(data.consumeInt(0, MqttWriter.MAX_REMAINING_LENGTH));
      case UTF8 -> out.string(data.consumeString(24));
      case BINARY -> out.binary(data.consumeBytes(data.consumeInt(0, 24)));
      case UTF8_PAIR -> out.string(data.consumeString(16)).string(data.consumeString(24));
    }
  }

  /** Topic aliases around the edges (0 is never valid, MQTT 5 §3.3.2.3.4), or any value. */
  private static int topicAlias(FuzzedDataProvider data) {
    return switch (data.consumeInt(0, 4)) {
      case 0 -> 1;
      case 1 -> 0;
      case 2 -> 10;
      case 3 -> 0xffff;
      default -> data.consumeInt(0, 0xffff);
    };
  }

  private static int unknownId(int candidate) {
    for (Property property : ALL) {
      if (property.id == candidate) {
        return 0x7f; // undefined
      }
    }
    return candidate;
  }
}
