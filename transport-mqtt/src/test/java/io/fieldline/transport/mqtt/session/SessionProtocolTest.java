package io.fieldline.transport.mqtt.session;

import static io.fieldline.transport.mqtt.testkit.SessionClient.TELEMETRY;
import static io.fieldline.transport.mqtt.testkit.SessionClient.connectMessage;
import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.telemetry;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.pipeline.PipelineNames;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * What the connection's lifecycle decides, whatever the packet: decoding failures, PINGREQ,
 * keep-alive (and its interplay with backpressure), takeover and persistent sessions. Driven
 * through the production pipeline in an EmbeddedChannel.
 */
class SessionProtocolTest extends SessionHandlerTestBase {

  @Nested
  class Decoding {

    @Test
    void should_close_with_too_large_when_packet_exceeds_max_size() {
      SessionFixture fixture = fixture("max-packet-size = 64");
      SessionClient client = connected(fixture);

      client.send(
          publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 1, "{\"v\":\"" + "x".repeat(64) + "\"}"));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("too_large")).isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_accept_packet_when_exactly_at_max_size() {
      SessionFixture fixture = fixture("max-packet-size = 64");
      SessionClient client = connected(fixture);
      // Fixed header 2 (type, remaining length 62); 2 + 23 topic + 2 packet id = 27 bytes of
      // variable header; 35 bytes of payload: 64 in all.
      String payload = "{\"v\":\"" + "x".repeat(27) + "\"}";
      assertThat(payload).hasSize(35);

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 1, payload));

      assertThat(client.isOpen()).isTrue();
      assertThat(fixture.gateway.submissions()).hasSize(1);
    }

    @Test
    void should_close_with_too_large_when_the_fixed_header_takes_the_packet_over_max_size() {
      SessionFixture fixture = fixture("max-packet-size = 64");
      SessionClient client = connected(fixture);
      // Remaining length 63 (under 64), but with its fixed header the packet has 65 bytes.
      String payload = "{\"v\":\"" + "x".repeat(28) + "\"}";

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 1, payload));

      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("too_large")).isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_close_with_malformed_when_qos1_packet_id_is_zero() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      byte[] topic = TELEMETRY.getBytes(StandardCharsets.US_ASCII);
      int[] packet = new int[2 + 2 + topic.length + 2 + 2];
      int i = 0;
      packet[i++] = 0x32; // PUBLISH, QoS 1
      packet[i++] = 2 + topic.length + 2 + 2;
      packet[i++] = 0x00;
      packet[i++] = topic.length;
      for (byte b : topic) {
        packet[i++] = b;
      }
      packet[i++] = 0x00; // packet id 0: forbidden (MQTT 3.1.1 §2.3.1)
      packet[i++] = 0x00;
      packet[i++] = '{';
      packet[i] = '}';
      client.sendBytes(packet);

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("malformed")).isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_close_with_malformed_when_packet_type_is_reserved_zero() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.sendBytes(0x00, 0x00);

      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("malformed")).isEqualTo(1);
    }

    @Test
    void should_close_with_malformed_when_qos_bits_are_3() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.sendBytes(0x36, 0x05, 0x00, 0x01, 'a', 0x00, 0x01);

      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("malformed")).isEqualTo(1);
    }

    @Test
    void should_close_with_malformed_when_garbage_arrives_before_connect() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      client.sendBytes(0xf0, 0x00); // reserved type 15

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("malformed")).isEqualTo(1);
    }
  }

  @Nested
  class Ping {

    @Test
    void should_answer_pingreq_with_pingresp() {
      SessionClient client = connected(fixture());

      client.send(MqttMessage.PINGREQ);

      assertThat(client.received()).containsExactly("PINGRESP");
    }
  }

  @Nested
  class KeepAliveTimer {

    @Test
    void should_close_when_nothing_arrives_for_one_and_a_half_keep_alives() {
      SessionClient client = open(fixture());
      client.send(connectMessage(TOKEN, true, 1));
      assertThat(client.received()).containsExactly("CONNACK 0x00");

      client.advanceTime(1_400);
      assertThat(client.isOpen()).isTrue();

      client.advanceTime(200);
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_install_idle_timer_of_1500_ms_when_keep_alive_is_1_second() {
      SessionClient client = open(fixture());
      client.send(connectMessage(TOKEN, true, 1));
      client.received();

      IdleStateHandler idle = (IdleStateHandler) client.channel.pipeline().get(PipelineNames.IDLE);
      assertThat(idle.getReaderIdleTimeInMillis()).isEqualTo(1_500);
    }

    @Test
    void should_stay_open_when_pingreq_arrives_within_keep_alive() {
      SessionClient client = open(fixture());
      client.send(connectMessage(TOKEN, true, 1));
      client.received();

      for (int i = 0; i < 5; i++) {
        client.advanceTime(1_000);
        client.send(MqttMessage.PINGREQ);
      }

      assertThat(client.isOpen()).isTrue();
    }

    @Test
    void should_never_time_out_when_keep_alive_is_zero() {
      SessionClient client = open(fixture("connect-timeout = 1 s"));
      client.send(connectMessage(TOKEN, true, 0));
      client.received();

      client.advanceTime(3_600_000);

      assertThat(client.isOpen()).isTrue();
      assertThat(client.channel.pipeline().get(PipelineNames.IDLE)).isNull();
    }

    @Test
    void should_not_close_idle_connection_when_reading_is_paused_by_backpressure() {
      SessionFixture fixture = fixture("max-inflight = 2", "inflight-low-water = 0");
      SessionClient client = open(fixture);
      client.send(connectMessage(TOKEN, true, 1));
      client.received();
      client.send(telemetry(1), telemetry(2));
      assertThat(client.isReading()).isFalse();

      for (int i = 0; i < 10; i++) {
        client.advanceTime(1_000);
      }
      assertThat(client.isOpen()).as("the silence is ours, not the client's").isTrue();

      fixture.gateway.submission(0).store();
      fixture.gateway.submission(1).store();
      assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");
      client.advanceTime(1_600);
      assertThat(client.isOpen()).as("once reading again, keep-alive applies").isFalse();
    }
  }

  @Nested
  class Sessions {

    @Test
    void should_close_older_connection_when_same_device_connects_again() {
      SessionFixture fixture = fixture();
      SessionClient first = connected(fixture);

      SessionClient second = connected(fixture);

      assertThat(first.isOpen()).isFalse();
      assertThat(second.isOpen()).isTrue();
      assertThat(fixture.sessions.activeSessions()).isEqualTo(1);
    }

    @Test
    void should_report_session_present_when_persistent_session_reconnects() {
      SessionFixture fixture = fixture();
      SessionClient first = open(fixture);
      first.send(connectMessage(TOKEN, false, 60));
      assertThat(first.received()).containsExactly("CONNACK 0x00");
      first.send(MqttMessage.DISCONNECT);

      SessionClient second = open(fixture);
      second.send(connectMessage(TOKEN, false, 60));

      assertThat(second.received()).containsExactly("CONNACK 0x00 session-present");
    }

    @Test
    void should_count_open_connections_when_channels_open_and_close() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      assertThat(fixture.meters.get("fieldline.mqtt.connections").gauge().value()).isEqualTo(1);

      client.send(MqttMessage.DISCONNECT);

      assertThat(fixture.meters.get("fieldline.mqtt.connections").gauge().value()).isZero();
    }
  }
}
