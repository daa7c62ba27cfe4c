package io.fieldline.server;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * MQTT 3.1.1 packets written and read by hand, for tests that must behave as no client library
 * would (never read, pipeline thousands of packets in one write, hold QoS 2 ids). Only the packets
 * the tests need.
 */
final class RawMqtt {

  static final int CONNACK = 2;
  static final int PUBLISH = 3;
  static final int PUBACK = 4;
  static final int PUBREC = 5;
  static final int PUBCOMP = 7;
  static final int PINGRESP = 13;

  /** One packet read from the server: its type, and the bytes after the remaining length. */
  record Packet(int type, byte[] body) {
    /** The packet id of a PUBACK, PUBREC or PUBCOMP. */
    int packetId() {
      return ((body[0] & 0xff) << 8) | (body[1] & 0xff);
    }
  }

  private RawMqtt() {}

  /** CONNECT with keep-alive 60 s and the token as user name. */
  static byte[] connect(String clientId, String token, boolean cleanSession) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    writeString(body, "MQTT");
    body.write(4); // protocol level 3.1.1
    body.write(cleanSession ? 0x82 : 0x80); // user name flag, clean session flag
    body.write(0);
    body.write(60);
    writeString(body, clientId);
    writeString(body, token);
    return packet(0x10, body);
  }

  /** PUBLISH; {@code packetId} is ignored at QoS 0. */
  static byte[] publish(String topic, int qos, int packetId, String payload) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    writeString(body, topic);
    if (qos > 0) {
      body.write(packetId >> 8);
      body.write(packetId & 0xff);
    }
    body.writeBytes(payload.getBytes(StandardCharsets.UTF_8));
    return packet(0x30 | (qos << 1), body);
  }

  static byte[] pubrel(int packetId) {
    return new byte[] {0x62, 2, (byte) (packetId >> 8), (byte) packetId};
  }

  static byte[] pingreq() {
    return new byte[] {(byte) 0xc0, 0};
  }

  /** Reads the next whole packet; fails on the end of the stream. */
  static Packet read(InputStream in) throws IOException {
    DataInputStream data = new DataInputStream(in);
    int first = data.readUnsignedByte();
    int remaining = 0;
    int multiplier = 1;
    int digit;
    do {
      digit = data.readUnsignedByte();
      remaining += (digit & 0x7f) * multiplier;
      multiplier *= 128;
    } while ((digit & 0x80) != 0);
    byte[] body = new byte[remaining];
    data.readFully(body);
    return new Packet(first >> 4, body);
  }

  private static byte[] packet(int firstByte, ByteArrayOutputStream body) {
    ByteArrayOutputStream packet = new ByteArrayOutputStream();
    packet.write(firstByte);
    int remaining = body.size();
    do {
      int digit = remaining % 128;
      remaining /= 128;
      packet.write(remaining > 0 ? digit | 0x80 : digit);
    } while (remaining > 0);
    packet.writeBytes(body.toByteArray());
    return packet.toByteArray();
  }

  private static void writeString(ByteArrayOutputStream out, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    out.write(bytes.length >> 8);
    out.write(bytes.length & 0xff);
    out.writeBytes(bytes);
  }
}
