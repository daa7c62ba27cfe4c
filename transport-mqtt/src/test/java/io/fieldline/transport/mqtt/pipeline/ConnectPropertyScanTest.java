package io.fieldline.transport.mqtt.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@link ConnectPropertyScan} over CONNECTs written by Netty's encoder, split every way. */
class ConnectPropertyScanTest {

  @Test
  void should_find_nothing_repeated_in_a_connect_with_every_kind_of_property() {
    byte[] connect = encode(connectWithWill(wellFormedProperties(), willProperties()));

    for (int chunk : new int[] {1, 2, 3, 7, connect.length}) {
      EmbeddedChannel channel = scanned(connect, chunk);
      assertThat(channel.attr(ConnectPropertyScan.REPEATED).get()).as("chunk %d", chunk).isNull();
      assertThat(channel.pipeline().get(ConnectPropertyScan.class)).isNull();
      assertThat(readAll(channel)).as("bytes pass unchanged").isEqualTo(connect);
    }
  }

  @Test
  void should_find_a_property_repeated_in_the_will_after_a_user_property_pair() {
    byte[] connect = encode(connectWithWill(wellFormedProperties(), willProperties()));
    // Netty's encoder keeps one Content Type: add a second by hand at the end of the Will
    // properties, which follow the client id "c".
    byte[] patched = withRepeatedWillContentType(connect);

    EmbeddedChannel channel = scanned(patched, 5);

    assertThat(channel.attr(ConnectPropertyScan.REPEATED).get()).isEqualTo(0x03);
  }

  @Test
  void should_leave_mqtt_3_and_other_packets_alone() {
    byte[] v3 =
        encode(
            MqttMessageBuilders.connect()
                .protocolVersion(MqttVersion.MQTT_3_1_1)
                .clientId("c")
                .build());
    assertThat(scanned(v3, 1).attr(ConnectPropertyScan.REPEATED).get()).isNull();
    assertThat(scanned(new byte[] {(byte) 0xC0, 0}, 1).pipeline().get(ConnectPropertyScan.class))
        .isNull();
  }

  private static MqttProperties wellFormedProperties() {
    MqttProperties p = new MqttProperties();
    p.add(new MqttProperties.IntegerProperty(MqttProperties.SESSION_EXPIRY_INTERVAL, 300));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.RECEIVE_MAXIMUM, 20));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.MAXIMUM_PACKET_SIZE, 1 << 20));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.TOPIC_ALIAS_MAXIMUM, 5));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.REQUEST_RESPONSE_INFORMATION, 1));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.REQUEST_PROBLEM_INFORMATION, 1));
    p.add(new MqttProperties.UserProperty("k", "v1"));
    p.add(new MqttProperties.UserProperty("k", "v2"));
    p.add(new MqttProperties.BinaryProperty(MqttProperties.AUTHENTICATION_DATA, new byte[300]));
    return p;
  }

  private static MqttProperties willProperties() {
    MqttProperties p = new MqttProperties();
    p.add(new MqttProperties.IntegerProperty(MqttProperties.WILL_DELAY_INTERVAL, 10));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.PAYLOAD_FORMAT_INDICATOR, 1));
    p.add(new MqttProperties.IntegerProperty(MqttProperties.PUBLICATION_EXPIRY_INTERVAL, 60));
    p.add(new MqttProperties.StringProperty(MqttProperties.RESPONSE_TOPIC, "replies/1"));
    p.add(new MqttProperties.BinaryProperty(MqttProperties.CORRELATION_DATA, new byte[] {1, 2}));
    p.add(new MqttProperties.UserProperty("a", "b"));
    p.add(new MqttProperties.StringProperty(MqttProperties.CONTENT_TYPE, "text/plain"));
    return p;
  }

  private static MqttMessage connectWithWill(MqttProperties properties, MqttProperties will) {
    return MqttMessageBuilders.connect()
        .protocolVersion(MqttVersion.MQTT_5)
        .clientId("c")
        .cleanSession(true)
        .keepAlive(60)
        .properties(properties)
        .willFlag(true)
        .willQoS(MqttQoS.AT_MOST_ONCE)
        .willTopic("w")
        .willMessage("bye".getBytes(StandardCharsets.UTF_8))
        .willProperties(will)
        .hasUser(true)
        .username("token")
        .build();
  }

  private static byte[] encode(MqttMessage message) {
    EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
    encoder.writeOutbound(message);
    return readAllOutbound(encoder);
  }

  private static byte[] readAllOutbound(EmbeddedChannel channel) {
    ByteBuf all = Unpooled.buffer();
    ByteBuf part;
    while ((part = channel.readOutbound()) != null) {
      all.writeBytes(part);
      part.release();
    }
    byte[] bytes = new byte[all.readableBytes()];
    all.readBytes(bytes);
    all.release();
    return bytes;
  }

  private static byte[] readAll(EmbeddedChannel channel) {
    ByteBuf all = Unpooled.buffer();
    ByteBuf part;
    while ((part = channel.readInbound()) != null) {
      all.writeBytes(part);
      part.release();
    }
    byte[] bytes = new byte[all.readableBytes()];
    all.readBytes(bytes);
    all.release();
    return bytes;
  }

  private static EmbeddedChannel scanned(byte[] bytes, int chunk) {
    EmbeddedChannel channel = new EmbeddedChannel(new ConnectPropertyScan());
    for (int at = 0; at < bytes.length; at += chunk) {
      channel.writeInbound(Unpooled.copiedBuffer(bytes, at, Math.min(chunk, bytes.length - at)));
    }
    return channel;
  }

  // Appends Content Type "x" (0x03, length 1) to the Will properties and fixes both lengths.
  private static byte[] withRepeatedWillContentType(byte[] connect) {
    int remainingBytes = 1;
    while ((connect[remainingBytes] & 0x80) != 0) {
      remainingBytes++;
    }
    int at = 1 + remainingBytes + 10; // fixed header, then name, level, flags, keep alive
    int[] length = varInt(connect, at);
    at = length[1] + length[0]; // past the CONNECT properties
    at += 2 + 1; // the client id "c"
    int[] willLength = varInt(connect, at);
    int willEnd = willLength[1] + willLength[0];
    byte[] extra = {0x03, 0, 1, 'x'};
    ByteBuf out = Unpooled.buffer();
    out.writeByte(connect[0]);
    writeVarInt(out, varInt(connect, 1)[0] + extra.length);
    out.writeBytes(connect, 1 + remainingBytes, at - 1 - remainingBytes);
    if (willLength[0] + extra.length >= 128) {
      throw new IllegalStateException("the test's Will properties must stay under 128 bytes");
    }
    out.writeByte(willLength[0] + extra.length);
    out.writeBytes(connect, willLength[1], willEnd - willLength[1]);
    out.writeBytes(extra);
    out.writeBytes(connect, willEnd, connect.length - willEnd);
    byte[] bytes = new byte[out.readableBytes()];
    out.readBytes(bytes);
    return bytes;
  }

  // {value, index after it}
  private static int[] varInt(byte[] bytes, int at) {
    int value = 0;
    int shift = 0;
    int b;
    do {
      b = bytes[at++] & 0xFF;
      value |= (b & 0x7F) << shift;
      shift += 7;
    } while ((b & 0x80) != 0);
    return new int[] {value, at};
  }

  private static void writeVarInt(ByteBuf out, int value) {
    do {
      int digit = value & 0x7F;
      value >>>= 7;
      out.writeByte(value > 0 ? digit | 0x80 : digit);
    } while (value > 0);
  }
}
