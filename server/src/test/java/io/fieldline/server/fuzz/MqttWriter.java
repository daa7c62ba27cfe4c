package io.fieldline.server.fuzz;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The byte-level encodings of MQTT 3.1.1 §1.5 and MQTT 5 §1.5 (integers, variable byte integers,
 * length-prefixed strings and binary data) and the fixed header, written into a growing buffer.
 * Nothing is validated: the fuzz packets use it to write what a client should not send as readily
 * as what it should. Not thread-safe; one per packet being built.
 */
final class MqttWriter {

  /** The largest remaining length a fixed header can carry (MQTT 3.1.1 §2.2.3). */
  static final int MAX_REMAINING_LENGTH = 268_435_455;

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  MqttWriter u8(int value) {
    out.write(value & 0xff);
    return this;
  }

  MqttWriter u16(int value) {
    out.write((value >> 8) & 0xff);
    out.write(value & 0xff);
    return this;
  }

  MqttWriter u32(int value) {
    u16(value >>> 16);
    return u16(value);
  }

  /** A variable byte integer (MQTT 5 §1.5.5), 0 to {@link #MAX_REMAINING_LENGTH}. */
  MqttWriter varint(int value) {
    int remaining = value;
    do {
      int digit = remaining % 128;
      remaining /= 128;
      out.write(remaining > 0 ? digit | 0x80 : digit);
    } while (remaining > 0);
    return this;
  }

  /** A UTF-8 string with its two-byte length (MQTT 3.1.1 §1.5.3). */
  MqttWriter string(String text) {
    return binary(text.getBytes(StandardCharsets.UTF_8));
  }

  /** Bytes with their two-byte length: binary data, or a string's bytes as they are. */
  MqttWriter binary(byte[] bytes) {
    u16(bytes.length);
    out.writeBytes(bytes);
    return this;
  }

  MqttWriter bytes(byte[] bytes) {
    out.writeBytes(bytes);
    return this;
  }

  int size() {
    return out.size();
  }

  byte[] toByteArray() {
    return out.toByteArray();
  }

  /** A whole packet: the first byte, the body's true length, the body. */
  static byte[] packet(int firstByte, byte[] body) {
    return new MqttWriter().u8(firstByte).varint(body.length).bytes(body).toByteArray();
  }

  /** A whole packet whose fixed header declares {@code declaredLength}, whatever the body's. */
  static byte[] packet(int firstByte, int declaredLength, byte[] body) {
    return new MqttWriter().u8(firstByte).varint(declaredLength).bytes(body).toByteArray();
  }
}
