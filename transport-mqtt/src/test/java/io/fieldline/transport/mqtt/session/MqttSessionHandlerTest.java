package io.fieldline.transport.mqtt.session;

import static io.fieldline.transport.mqtt.session.SessionClient.TELEMETRY;
import static io.fieldline.transport.mqtt.session.SessionClient.connectMessage;
import static io.fieldline.transport.mqtt.session.SessionClient.publish;
import static io.fieldline.transport.mqtt.session.SessionClient.pubrel;
import static io.fieldline.transport.mqtt.session.SessionClient.telemetry;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.Ack;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceMessage;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TsKvEntry;
import io.fieldline.transport.mqtt.pipeline.PipelineNames;
import io.fieldline.transport.mqtt.testkit.FakeDeadLetterStore;
import io.fieldline.transport.mqtt.testkit.TestConfigs;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.handler.timeout.IdleStateHandler;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The session state machine, driven through the production pipeline in an EmbeddedChannel. */
class MqttSessionHandlerTest {

  private static final String TOKEN = "token-A1";

  private final List<SessionClient> clients = new ArrayList<>();

  @AfterEach
  void closeClients() {
    clients.forEach(SessionClient::close);
  }

  private SessionFixture fixture(String... overrides) {
    SessionFixture fixture = new SessionFixture(TestConfigs.mqtt(overrides));
    fixture.registry.add(TOKEN);
    return fixture;
  }

  private SessionClient open(SessionFixture fixture) {
    SessionClient client = fixture.open();
    clients.add(client);
    return client;
  }

  private SessionClient connected(SessionFixture fixture) {
    SessionClient client = open(fixture);
    assertThat(client.connect(TOKEN)).isEqualTo("CONNACK 0x00");
    return client;
  }

  @Nested
  class Connect {

    @Test
    void should_refuse_with_0x04_and_close_when_username_is_empty() {
      SessionFixture fixture = fixture();
      SessionClient client = open(fixture);

      assertThat(client.connect("")).isEqualTo("CONNACK 0x04");
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.connects", "result", "bad_credentials")).isEqualTo(1);
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
    void should_refuse_with_v5_reason_0x84_and_close_when_client_speaks_mqtt5() {
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

      // MQTT 5 CONNACK: flags 0, reason code 0x84 (unsupported protocol version), no properties.
      assertThat(client.receivedBytes()).containsExactly(0x20, 0x03, 0x00, 0x84, 0x00);
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.connects", "result", "unsupported_version"))
          .isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
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

  @Nested
  class Publish {

    @Test
    void should_submit_parsed_telemetry_of_the_authenticated_device_when_published() {
      SessionFixture fixture = fixture();
      Device device = fixture.registry.add("token-B2");
      SessionClient client = open(fixture);
      assertThat(client.connect("token-B2")).isEqualTo("CONNACK 0x00");

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 1, "{\"temperature\":21.5}"));

      assertThat(fixture.gateway.submissions()).hasSize(1);
      DeviceMessage message = fixture.gateway.submission(0).message();
      assertThat(message).isInstanceOf(DeviceMessage.PostTelemetry.class);
      assertThat(message.deviceId()).isEqualTo(device.id());
      assertThat(((DeviceMessage.PostTelemetry) message).entries())
          .extracting(TsKvEntry::kv)
          .containsExactly(new KvEntry.DoubleKv("temperature", 21.5));
      assertThat(fixture.count("fieldline.mqtt.publish.received", "qos", "1")).isEqualTo(1);
    }

    @Test
    void should_submit_attributes_when_published_to_attributes_topic() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.send(publish("v1/devices/me/attributes", MqttQoS.AT_LEAST_ONCE, 4, "{\"fw\":\"1.2\"}"));
      fixture.gateway.submission(0).store();

      assertThat(fixture.gateway.submission(0).message())
          .isInstanceOf(DeviceMessage.PostAttributes.class);
      assertThat(client.received()).containsExactly("PUBACK 4");
    }

    @Test
    void should_send_pubacks_in_arrival_order_when_writes_complete_out_of_order() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(telemetry(1), telemetry(2), telemetry(3));
      assertThat(fixture.gateway.submissions()).hasSize(3);

      fixture.gateway.submission(2).store();
      assertThat(client.received()).isEmpty();

      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBACK 1");

      fixture.gateway.submission(1).store();
      assertThat(client.received()).containsExactly("PUBACK 2", "PUBACK 3");
      assertThat(fixture.count("fieldline.mqtt.puback.sent")).isEqualTo(3);
    }

    @Test
    void should_ack_earlier_publishes_then_close_when_a_write_fails() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(telemetry(1), telemetry(2), telemetry(3));

      fixture.gateway.submission(1).fail();
      fixture.gateway.submission(2).store();
      assertThat(client.received()).as("failure waits for earlier publishes").isEmpty();
      assertThat(client.isOpen()).isTrue();
      assertThat(client.isReading()).as("a failing connection takes no new work").isFalse();

      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBACK 1");
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.write.failures")).isEqualTo(1);
    }

    @Test
    void should_not_ack_when_gateway_rejects_the_message() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(telemetry(1));

      fixture.gateway.submission(0).outcome().complete(Ack.rejected(Ack.Reason.OVERLOADED, "test"));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.write.failures")).isEqualTo(1);
    }

    @Test
    void should_close_without_ack_when_gateway_throws() {
      // A gateway that throws instead of returning a failed stage must not break the pipeline.
      SessionFixture fixture =
          new SessionFixture(
              TestConfigs.mqtt(),
              message -> {
                throw new IllegalStateException("test: gateway bug");
              });
      fixture.registry.add(TOKEN);
      SessionClient client = connected(fixture);

      client.send(telemetry(1));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.write.failures")).isEqualTo(1);
    }

    @Test
    void should_close_and_count_topic_rejection_when_topic_is_unknown() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.send(publish("v1/devices/me/unknown", MqttQoS.AT_LEAST_ONCE, 1, "{}"));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("topic")).isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_hold_qos0_publish_in_window_without_sending_anything() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.send(publish(TELEMETRY, MqttQoS.AT_MOST_ONCE, 0, "{\"a\":1}"), telemetry(2));
      fixture.gateway.submission(1).store();
      assertThat(client.received()).as("QoS 0 ahead still orders the PUBACK").isEmpty();

      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBACK 2");
    }
  }

  @Nested
  class Backpressure {

    @Test
    void should_stop_reading_when_window_is_full_and_resume_at_low_water() {
      SessionFixture fixture = fixture("max-inflight = 4", "inflight-low-water = 2");
      SessionClient client = connected(fixture);

      client.send(telemetry(1), telemetry(2), telemetry(3));
      assertThat(client.isReading()).isTrue();
      client.send(telemetry(4));
      assertThat(client.isReading()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "window"))
          .isEqualTo(1);

      fixture.gateway.submission(0).store();
      client.runTasks();
      assertThat(client.isReading()).as("3 in flight is above the low-water mark").isFalse();

      fixture.gateway.submission(1).store();
      client.runTasks();
      assertThat(client.isReading()).isTrue();
      assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");
    }

    @Test
    void should_stay_paused_when_window_drains_out_of_order() {
      SessionFixture fixture = fixture("max-inflight = 4", "inflight-low-water = 2");
      SessionClient client = connected(fixture);
      client.send(telemetry(1), telemetry(2), telemetry(3), telemetry(4));

      fixture.gateway.submission(2).store();
      fixture.gateway.submission(3).store();
      client.runTasks();

      assertThat(client.isReading()).isFalse();
      assertThat(client.received()).isEmpty();
    }

    @Test
    void should_pause_and_resume_reading_when_storage_pressure_changes() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.handler.onStoragePressure(true);
      assertThat(client.isReading()).isFalse();
      assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "storage"))
          .isEqualTo(1);

      client.handler.onStoragePressure(false);
      assertThat(client.isReading()).isTrue();
    }

    @Test
    void should_keep_paused_when_storage_relieves_but_window_is_still_full() {
      SessionFixture fixture = fixture("max-inflight = 2", "inflight-low-water = 0");
      SessionClient client = connected(fixture);
      client.handler.onStoragePressure(true);
      client.send(telemetry(1), telemetry(2));

      client.handler.onStoragePressure(false);
      assertThat(client.isReading()).isFalse();

      fixture.gateway.submission(0).store();
      fixture.gateway.submission(1).store();
      client.runTasks();
      assertThat(client.isReading()).isTrue();
    }

    @Test
    void should_start_paused_when_storage_is_overloaded_at_connect() {
      SessionFixture fixture = fixture();
      fixture.storageOverloaded = true;
      SessionClient client = open(fixture);

      assertThat(client.connect(TOKEN)).isEqualTo("CONNACK 0x00");
      assertThat(client.isReading()).isFalse();

      fixture.storageOverloaded = false;
      client.handler.onStoragePressure(false);
      assertThat(client.isReading()).isTrue();
    }
  }

  @Nested
  class InvalidPayload {

    @Test
    void should_ack_only_after_dead_letter_is_stored_when_policy_is_dead_letter() {
      SessionFixture fixture = fixture("invalid-payload = dead-letter");
      SessionClient client = connected(fixture);

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 5, "not json"));

      assertThat(fixture.gateway.submissions()).isEmpty();
      assertThat(fixture.deadLetters.writes()).hasSize(1);
      FakeDeadLetterStore.Write write = fixture.deadLetters.writes().get(0);
      assertThat(write.deadLetter().topic()).isEqualTo(TELEMETRY);
      assertThat(write.deadLetter().payload()).isEqualTo("not json".getBytes(StandardCharsets.UTF_8));
      assertThat(client.received()).as("no PUBACK before the dead letter is stored").isEmpty();

      write.done().complete(null);
      assertThat(client.received()).containsExactly("PUBACK 5");
      assertThat(client.isOpen()).isTrue();
      assertThat(fixture.rejected("payload")).isEqualTo(1);
    }

    @Test
    void should_close_without_ack_when_dead_letter_write_fails() {
      SessionFixture fixture = fixture("invalid-payload = dead-letter");
      SessionClient client = connected(fixture);

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 5, "[1,"));
      fixture.deadLetters.writes().get(0).done().completeExceptionally(new IllegalStateException());

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
    }

    @Test
    void should_close_without_ack_when_policy_is_close() {
      SessionFixture fixture = fixture("invalid-payload = close");
      SessionClient client = connected(fixture);

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 5, "not json"));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.deadLetters.writes()).isEmpty();
      assertThat(fixture.rejected("payload")).isEqualTo(1);
    }
  }

  @Nested
  class Decoding {

    @Test
    void should_close_with_too_large_when_packet_exceeds_max_size() {
      SessionFixture fixture = fixture("max-packet-size = 64");
      SessionClient client = connected(fixture);

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 1, "{\"v\":\"" + "x".repeat(64) + "\"}"));

      assertThat(client.received()).isEmpty();
      assertThat(client.isOpen()).isFalse();
      assertThat(fixture.rejected("too_large")).isEqualTo(1);
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_accept_packet_when_exactly_at_max_size() {
      SessionFixture fixture = fixture("max-packet-size = 64");
      SessionClient client = connected(fixture);
      // 2 + 23 topic + 2 packet id = 27 bytes of variable header; 37 bytes of payload = 64.
      String payload = "{\"v\":\"" + "x".repeat(29) + "\"}";
      assertThat(payload).hasSize(37);

      client.send(publish(TELEMETRY, MqttQoS.AT_LEAST_ONCE, 1, payload));

      assertThat(client.isOpen()).isTrue();
      assertThat(fixture.gateway.submissions()).hasSize(1);
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
  class Qos2 {

    @Test
    void should_pubrec_after_store_and_pubcomp_after_pubrel() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);

      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));
      assertThat(client.received()).isEmpty();

      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBREC 7");

      client.send(pubrel(7));
      assertThat(client.received()).containsExactly("PUBCOMP 7");
      assertThat(fixture.count("fieldline.mqtt.pubrec.sent")).isEqualTo(1);
    }

    @Test
    void should_pubrec_without_resubmitting_when_duplicate_arrives_before_pubrel() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));
      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBREC 7");

      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));

      assertThat(fixture.gateway.submissions()).hasSize(1);
      assertThat(client.received()).containsExactly("PUBREC 7");
    }

    @Test
    void should_not_resubmit_when_duplicate_arrives_while_first_is_still_being_stored() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 8, "{\"a\":1}"));

      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 8, "{\"a\":1}"));
      assertThat(fixture.gateway.submissions()).hasSize(1);
      assertThat(client.received()).as("not PUBREC'd before the first copy is stored").isEmpty();

      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBREC 8", "PUBREC 8");
    }

    @Test
    void should_store_again_when_packet_id_is_reused_after_pubrel() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));
      fixture.gateway.submission(0).store();
      assertThat(client.received()).containsExactly("PUBREC 7");
      client.send(pubrel(7));
      assertThat(client.received()).containsExactly("PUBCOMP 7");

      client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":2}"));

      assertThat(fixture.gateway.submissions()).hasSize(2);
    }

    @Test
    void should_resubmit_after_reconnect_when_first_copy_was_never_stored() {
      SessionFixture fixture = fixture();
      SessionClient first = open(fixture);
      first.send(connectMessage(TOKEN, false, 60));
      assertThat(first.received()).containsExactly("CONNACK 0x00");
      first.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 9, "{\"a\":1}"));
      fixture.gateway.submission(0).fail();
      assertThat(first.isOpen()).isFalse();

      SessionClient second = open(fixture);
      second.send(connectMessage(TOKEN, false, 60));
      assertThat(second.received()).containsExactly("CONNACK 0x00 session-present");
      second.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 9, "{\"a\":1}"));

      assertThat(fixture.gateway.submissions()).as("the failed copy must be stored again").hasSize(2);
    }
  }

  @Nested
  class Subscriptions {

    @Test
    void should_grant_at_most_qos1_for_allowed_filters_and_0x80_for_others() {
      SessionClient client = connected(fixture());

      client.send(
          MqttMessageBuilders.subscribe()
              .messageId(3)
              .addSubscription(MqttQoS.EXACTLY_ONCE, "v1/devices/me/rpc/request/+")
              .addSubscription(MqttQoS.AT_MOST_ONCE, "v1/devices/me/attributes")
              .addSubscription(MqttQoS.AT_LEAST_ONCE, "v1/devices/me/attributes/response/+")
              .addSubscription(MqttQoS.AT_LEAST_ONCE, "#")
              .build());

      assertThat(client.received()).containsExactly("SUBACK 3 [1, 0, 1, 128]");
      assertThat(client.isOpen()).isTrue();
    }

    @Test
    void should_unsuback_when_client_unsubscribes() {
      SessionClient client = connected(fixture());

      client.send(
          MqttMessageBuilders.unsubscribe().messageId(4).addTopicFilter("v1/devices/me/attributes").build());

      assertThat(client.received()).containsExactly("UNSUBACK 4");
    }
  }

  @Nested
  class ClientRpcAndPing {

    private final ObjectMapper mapper = new ObjectMapper();

    @Test
    void should_answer_get_session_limits_on_response_topic() throws Exception {
      SessionFixture fixture = fixture("max-packet-size = 2048", "max-inflight = 7", "inflight-low-water = 1");
      SessionClient client = connected(fixture);

      client.send(
          publish(
              "v1/devices/me/rpc/request/42",
              MqttQoS.AT_LEAST_ONCE,
              11,
              "{\"method\":\"getSessionLimits\",\"params\":{}}"));

      List<String> received = client.received();
      assertThat(received).hasSize(2);
      assertThat(received.get(0)).startsWith("PUBLISH v1/devices/me/rpc/response/42 ");
      JsonNode response =
          mapper.readTree(received.get(0).substring("PUBLISH v1/devices/me/rpc/response/42 ".length()));
      assertThat(response.get("maxPayloadSize").asInt()).isEqualTo(2048);
      assertThat(response.get("maxInflightMessages").asInt()).isEqualTo(7);
      assertThat(response.get("rateLimits").isObject()).isTrue();
      assertThat(received.get(1)).isEqualTo("PUBACK 11");
      assertThat(fixture.gateway.submissions()).isEmpty();
    }

    @Test
    void should_answer_rpc_at_once_when_earlier_publish_is_still_pending() {
      SessionFixture fixture = fixture();
      SessionClient client = connected(fixture);
      client.send(telemetry(1));

      client.send(
          publish("v1/devices/me/rpc/request/5", MqttQoS.AT_MOST_ONCE, 0, "{\"method\":\"getCurrentTime\"}"));

      assertThat(client.received())
          .singleElement()
          .asString()
          .startsWith("PUBLISH v1/devices/me/rpc/response/5 {\"currentTime\":");
    }

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
