package io.fieldline.transport.mqtt.connect;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The connect deadline and the well-formedness of CONNECT's strings, through the real pipeline. */
class PreAuthTest extends SessionHandlerTestBase {

  private static byte[] connectBytes(String clientId, String token) {
    EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
    try {
      encoder.writeOutbound(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_3_1_1)
              .clientId(clientId)
              .cleanSession(true)
              .keepAlive(60)
              .hasUser(true)
              .username(token)
              .build());
      ByteBuf buf = encoder.readOutbound();
      try {
        return ByteBufUtil.getBytes(buf);
      } finally {
        buf.release();
      }
    } finally {
      encoder.finishAndReleaseAll();
    }
  }

  @Test
  void should_close_at_the_deadline_when_connect_is_trickled_one_byte_at_a_time() {
    SessionFixture fixture = fixture("connect-timeout = 2 s");
    SessionClient client = open(fixture);
    byte[] connect = connectBytes("trickler", TOKEN);

    // One byte every 300 ms: every read would reset an idle timer, the deadline still runs out.
    int sent = 0;
    for (; sent < 6; sent++) {
      client.sendBytes(connect[sent] & 0xff);
      client.advanceTime(300);
    }
    assertThat(client.isOpen()).isTrue();
    client.sendBytes(connect[sent] & 0xff);
    client.advanceTime(300);

    assertThat(client.isOpen()).isFalse();
    assertThat(client.received()).isEmpty();
    assertThat(fixture.rejected("connect_timeout")).isEqualTo(1);
  }

  @Test
  void should_close_at_the_deadline_when_authentication_does_not_finish() {
    SessionFixture fixture = fixture("connect-timeout = 2 s");
    fixture.registry.holdLookups();
    SessionClient client = open(fixture);
    client.send(SessionClient.connectMessage(TOKEN, true, 60));

    client.advanceTime(2_100);

    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.rejected("connect_timeout")).isEqualTo(1);
  }

  @Test
  void should_keep_the_connection_after_the_deadline_when_it_was_accepted() {
    SessionFixture fixture = fixture("connect-timeout = 2 s");
    SessionClient client = connected(fixture);

    client.advanceTime(5_000);

    assertThat(client.isOpen()).isTrue();
    assertThat(fixture.rejected("connect_timeout")).isZero();
  }

  @Test
  void should_close_without_connack_when_client_id_contains_nul() {
    SessionFixture fixture = fixture();
    fixture.registry.holdLookups();
    SessionClient client = open(fixture);

    client.send(
        MqttMessageBuilders.connect()
            .protocolVersion(MqttVersion.MQTT_3_1_1)
            .clientId("bad" + (char) 0 + "id")
            .cleanSession(true)
            .hasUser(true)
            .username(TOKEN)
            .build());

    assertThat(client.received()).isEmpty();
    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.rejected("bad_utf8")).isEqualTo(1);
    assertThat(fixture.registry.pendingLookups()).isEmpty();
  }

  @Test
  void should_close_without_connack_when_client_id_is_invalid_utf8() {
    SessionFixture fixture = fixture();
    SessionClient client = open(fixture);
    byte[] connect = connectBytes("abc", TOKEN);
    // The client id's bytes follow its 2-byte length; 0xff never occurs in UTF-8.
    int id = indexOf(connect, "abc".getBytes(StandardCharsets.US_ASCII));
    connect[id + 1] = (byte) 0xff;

    client.channel.writeInbound(Unpooled.wrappedBuffer(connect));

    assertThat(client.received()).isEmpty();
    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.rejected("bad_utf8")).isEqualTo(1);
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i <= haystack.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    throw new AssertionError("not found");
  }
}
