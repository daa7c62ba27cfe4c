package io.fieldline.transport.mqtt.publish;

import static io.fieldline.transport.mqtt.testkit.SessionClient.TELEMETRY;
import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.telemetry;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.device.Device;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.transport.mqtt.testkit.FakeDeadLetterStore;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.fieldline.transport.mqtt.testkit.TestConfigs;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The PUBLISH path: ordered acknowledgements, the in-flight window and invalid payloads. Driven
 * through the production pipeline in an EmbeddedChannel.
 */
class SessionPublishTest extends SessionHandlerTestBase {

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

      client.send(
          publish("v1/devices/me/attributes", MqttQoS.AT_LEAST_ONCE, 4, "{\"fw\":\"1.2\"}"));
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
    void should_ack_only_after_the_dead_letter_is_stored_and_stay_open_when_topic_is_unknown() {
      // The invalid-payload policy is about payloads: an unknown topic never closes.
      SessionFixture fixture = fixture("invalid-payload = close");
      SessionClient client = connected(fixture);

      client.send(publish("v1/devices/me/unknown", MqttQoS.AT_LEAST_ONCE, 1, "{\"a\":1}"));

      assertThat(fixture.gateway.submissions()).isEmpty();
      assertThat(fixture.deadLetters.writes()).hasSize(1);
      FakeDeadLetterStore.Write write = fixture.deadLetters.writes().get(0);
      assertThat(write.deadLetter().topic()).isEqualTo("v1/devices/me/unknown");
      assertThat(write.deadLetter().payload())
          .isEqualTo("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
      assertThat(client.received()).as("no PUBACK before the dead letter is stored").isEmpty();

      write.done().complete(null);
      assertThat(client.received()).containsExactly("PUBACK 1");
      assertThat(client.isOpen()).isTrue();
      assertThat(fixture.rejected("topic")).isEqualTo(1);
      assertThat(fixture.rejected("payload")).isZero();
      assertThat(fixture.count("fieldline.mqtt.deadletters")).isEqualTo(1);
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
      assertThat(write.deadLetter().payload())
          .isEqualTo("not json".getBytes(StandardCharsets.UTF_8));
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
}
