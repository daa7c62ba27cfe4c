package io.fieldline.transport.mqtt.connect;

import static io.fieldline.transport.mqtt.testkit.SessionClient.connectMessage;
import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.telemetry;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.device.Device;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * CONNECT handling and PUBLISHes pipelined behind it. Driven through the production pipeline in an
 * EmbeddedChannel.
 */
class SessionConnectTest extends SessionHandlerTestBase {

  @Nested
  class Connect {

    @Test
    void should_refuse_with_0x04_and_close_when_username_is_empty() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      assertThat(client.connect("")).isEqualTo("CONNACK 0x04");
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.connects", "result", "bad_credentials"))
          .isEqualTo(1);
    }

    @Test
    void should_refuse_with_0x04_when_username_is_absent() {
      SessionClient client = open(fixture());

      client.send(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_3_1_1)
              .clientId("c")
              .cleanSession(true)
              .build());

      assertThat(client.received()).containsExactly("CONNACK 0x04");
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_refuse_with_0x05_and_close_when_token_is_unknown() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      assertThat(client.connect("no-such-token")).isEqualTo("CONNACK 0x05");
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.connects", "result", "not_authorized")).isEqualTo(1);
    }

    @Test
    void should_refuse_with_0x03_when_registry_lookup_fails() {
      SessionFixture fixture = fixture();
      fixture.registry.failLookups(new IllegalStateException("test: cache down"));
      SessionClient client = open(fixture);

      assertThat(client.connect(TOKEN)).isEqualTo("CONNACK 0x03");
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_answer_connack_only_when_registry_lookup_completes() {
      SessionFixture fixture = fixture();
      fixture.registry.holdLookups();
      SessionClient client = open(fixture);

      client.send(connectMessage(TOKEN, true, 60));
      assertThat(client.received()).isEmpty();
      assertThat(client.isReading()).as("nothing is read while authenticating").isFalse();

      fixture.registry.releaseLookups(TOKEN);
      assertThat(client.received()).containsExactly("CONNACK 0x00");
      assertThat(client.isReading()).isTrue();
      assertThat(fixture.count("fieldline.mqtt.connects", "result", "accepted")).isEqualTo(1);
    }

    @Test
    void should_accept_mqtt5_and_announce_its_limits_in_connack() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      client.send(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_5)
              .clientId("c5")
              .cleanSession(true)
              .hasUser(true)
              .username(TOKEN)
              .build());

      byte[] connAck = client.receivedBytes();
      // MQTT 5 CONNACK: type 0x20, flags 0 (no session), reason code 0x00, then properties.
      assertThat(connAck[0]).isEqualTo((byte) 0x20);
      assertThat(connAck[2]).isZero();
      assertThat(connAck[3]).isZero();
      // Receive Maximum (0x21) = max-inflight (100).
      assertThat(indexOf(connAck, new byte[] {0x21, 0x00, 0x64})).isPositive();
      assertThat(client.isOpen()).isTrue();
      assertThat(fixture.count("fieldline.mqtt.connects", "result", "accepted")).isEqualTo(1);
    }

    @Test
    void should_refuse_mqtt5_enhanced_authentication_with_0x8c() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      client.send(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_5)
              .clientId("c5")
              .cleanSession(true)
              .hasUser(true)
              .username(TOKEN)
              .properties(authenticationMethod("SCRAM-SHA-256"))
              .build());

      byte[] connAck = client.receivedBytes();
      assertThat(connAck[0]).isEqualTo((byte) 0x20);
      assertThat(connAck[3]).isEqualTo((byte) 0x8C);
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    private static MqttProperties authenticationMethod(String method) {
      MqttProperties properties = new MqttProperties();
      properties.add(
          new MqttProperties.StringProperty(MqttProperties.AUTHENTICATION_METHOD, method));
      return properties;
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
      return -1;
    }

    @Test
    void should_tell_the_cluster_when_a_session_is_accepted() {
      SessionFixture fixture = fixture();
      Device device = fixture.registry.add("token-C3");
      SessionClient client = open(fixture);

      assertThat(client.connect("token-C3")).isEqualTo("CONNACK 0x00");

      assertThat(fixture.announced).containsExactly(device.id());
      assertThat(fixture.sessions.activeSessions()).isEqualTo(1);
    }

    @Test
    void should_not_tell_the_cluster_when_connect_is_refused() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      assertThat(client.connect("no-such-token")).isEqualTo("CONNACK 0x05");

      assertThat(fixture.announced).isEmpty();
      assertThat(fixture.sessions.activeSessions()).isZero();
    }

    @Test
    void should_refuse_with_0x01_and_close_when_protocol_level_is_unsupported() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      client.sendBytes(
          0x10, 13, // CONNECT, remaining length
          0x00, 0x04, 'M', 'Q', 'T', 'T', // protocol name
          0x07, // protocol level 7: no such MQTT
          0x02, // clean session
          0x00, 0x3c, // keep-alive 60 s
          0x00, 0x01, 'c'); // client id

      assertThat(client.received()).containsExactly("CONNACK 0x01");
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_refuse_with_0x02_when_client_id_is_too_long() {
      SessionFixture fixture = fixture("max-client-id-length = 23");
      SessionClient client = open(fixture);

      client.send(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_3_1_1)
              .clientId("x".repeat(24))
              .cleanSession(true)
              .hasUser(true)
              .username(TOKEN)
              .build());

      assertThat(client.received()).containsExactly("CONNACK 0x02");
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_refuse_with_0x02_when_client_id_is_empty_and_session_is_persistent() {
      SessionClient client = open(fixture());

      client.send(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_3_1_1)
              .clientId("")
              .cleanSession(false)
              .hasUser(true)
              .username(TOKEN)
              .build());

      assertThat(client.received()).containsExactly("CONNACK 0x02");
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_close_without_output_when_publish_comes_before_connect() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      client.send(telemetry(1));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("protocol")).isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_close_when_pingreq_comes_before_connect() {
      SessionClient client = open(fixture());

      client.send(MqttMessage.PINGREQ);

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_close_when_second_connect_arrives() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.send(connectMessage(TOKEN, true, 60));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("protocol")).isEqualTo(1);
    }

    @Test
    void should_close_when_connect_does_not_arrive_within_connect_timeout() {
      SessionClient client = open(fixture("connect-timeout = 2 s"));

      client.advanceTime(1_900);
      assertThat(client.isOpen()).isTrue();

      client.advanceTime(200);
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_close_when_client_sends_disconnect() {
      SessionClient client = connected(fixture());

      client.send(MqttMessage.DISCONNECT);

      assertThat(client.isOpen()).isFalse();
    }
  }

  @Nested
  class PipelinedBeforeConnack {

    @Test
    void should_process_pipelined_publishes_after_connack_when_lookup_was_pending() {
      SessionFixture fixture = fixture();
      fixture.registry.holdLookups();
      SessionClient client = open(fixture);

      client.send(connectMessage(TOKEN, true, 60), telemetry(1), telemetry(2));
      assertThat(client.received()).isEmpty();
      assertThat(fixture.gateway.submissions()).isEmpty();

      fixture.registry.releaseLookups(TOKEN);
      assertThat(client.received()).containsExactly("CONNACK 0x00");
      assertThat(fixture.gateway.submissions()).hasSize(2);
      assertThat(client.isReading()).isTrue();

      fixture.gateway.submission(0).store();
      fixture.gateway.submission(1).store();
      assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");
    }

    @Test
    void should_answer_pipelined_rpc_only_after_connack_when_lookup_was_pending() {
      SessionFixture fixture = fixture();
      fixture.registry.holdLookups();
      SessionClient client = open(fixture);

      client.send(
          connectMessage(TOKEN, true, 60),
          publish("v1/devices/me/rpc/request/1", MqttQoS.AT_MOST_ONCE, 0, "{\"method\":\"nope\"}"));
      assertThat(client.received()).isEmpty();

      fixture.registry.releaseLookups(TOKEN);
      assertThat(client.received())
          .containsExactly(
              "CONNACK 0x00",
              "PUBLISH v1/devices/me/rpc/response/1 {\"error\":\"unsupported method: nope\"}");
    }

    @Test
    void should_hold_every_pipelined_publish_and_serve_them_through_the_window_after_connack() {
      SessionFixture fixture = fixture("max-inflight = 4, inflight-low-water = 2");
      fixture.registry.holdLookups();
      SessionClient client = open(fixture);
      MqttMessage[] packets = new MqttMessage[11];
      packets[0] = connectMessage(TOKEN, true, 60);
      for (int id = 1; id <= 10; id++) {
        packets[id] = telemetry(id);
      }

      client.send(packets);
      assertThat(fixture.gateway.submissions()).isEmpty();
      fixture.registry.releaseLookups(TOKEN);

      // Ten packets came in one read; the window still takes them one by one.
      assertThat(client.received()).containsExactly("CONNACK 0x00");
      assertThat(fixture.gateway.submissions()).hasSize(4);
      assertThat(client.isReading()).isFalse();
      for (int stored = 0; stored < 10; stored++) {
        fixture.gateway.submission(stored).store();
        client.runTasks();
        assertThat(fixture.gateway.submissions().size() - (stored + 1)).isLessThanOrEqualTo(4);
      }
      List<String> acks = new ArrayList<>();
      for (int id = 1; id <= 10; id++) {
        acks.add("PUBACK " + id);
      }
      assertThat(client.received()).containsExactlyElementsOf(acks);
      assertThat(client.isOpen()).isTrue();
    }

    @Test
    void should_close_when_more_than_max_queued_publishes_arrive_before_connack() {
      SessionFixture fixture = fixture("max-queued-before-connack = 2");
      fixture.registry.holdLookups();
      SessionClient client = open(fixture);

      client.send(connectMessage(TOKEN, true, 60), telemetry(1), telemetry(2), telemetry(3));

      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("queue_overflow")).isEqualTo(1);
      fixture.registry.releaseLookups(TOKEN);
      assertThat(client.received()).isEmpty();
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_accept_max_queued_publishes_when_exactly_at_the_bound() {
      SessionFixture fixture = fixture("max-queued-before-connack = 2");
      fixture.registry.holdLookups();
      SessionClient client = open(fixture);

      client.send(connectMessage(TOKEN, true, 60), telemetry(1), telemetry(2));
      fixture.registry.releaseLookups(TOKEN);

      assertThat(client.received()).containsExactly("CONNACK 0x00");
      assertThat(client.isOpen()).isTrue();
      assertThat(fixture.gateway.submissions()).hasSize(2);
    }
  }
}
