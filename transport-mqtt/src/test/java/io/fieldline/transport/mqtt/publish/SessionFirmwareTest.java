package io.fieldline.transport.mqtt.publish;

import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.StoreException;
import io.fieldline.transport.common.firmware.FirmwareMetrics;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.fieldline.transport.mqtt.testkit.TestConfigs;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Firmware chunk requests ({@code v2/fw/request/{id}/chunk/{n}}) answered from the assigned
 * firmware through the production pipeline in an EmbeddedChannel, with ThingsBoard's semantics.
 */
class SessionFirmwareTest extends SessionHandlerTestBase {

  private static final byte[] FIRMWARE = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
  private static final String RESPONSE = "v2/fw/response/";

  private SessionFixture withFirmware(String... firmwareOverrides) {
    SessionFixture fixture =
        new SessionFixture(TestConfigs.mqtt(), null, TestConfigs.firmware(firmwareOverrides));
    fixture.registry.add(TOKEN);
    fixture.firmware.assign(device(fixture).id(), "fw", FIRMWARE);
    return fixture;
  }

  private static MqttMessage request(String id, int chunk, String size) {
    return publish("v2/fw/request/" + id + "/chunk/" + chunk, MqttQoS.AT_LEAST_ONCE, 1, size);
  }

  private static MqttMessage sdkSubscription() {
    return subscribe(1, "v2/fw/response/+", MqttQoS.AT_MOST_ONCE);
  }

  private double refused(SessionFixture fixture, String reason) {
    return fixture.count(FirmwareMetrics.REFUSED, "protocol", "mqtt", "reason", reason);
  }

  @Test
  void should_answer_every_chunk_and_an_empty_one_past_the_end_when_subscribed_like_the_sdk() {
    SessionFixture fixture = withFirmware();
    SessionClient client = connected(fixture);
    client.send(sdkSubscription());
    assertThat(client.received()).containsExactly("SUBACK 1 [0]");

    for (int chunk = 0; chunk < 4; chunk++) {
      client.send(request("7", chunk, "8"));
    }

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            "PUBLISH " + RESPONSE + "7/chunk/0 01234567",
            "PUBACK 1",
            "PUBLISH " + RESPONSE + "7/chunk/1 89abcdef",
            "PUBACK 1",
            "PUBLISH " + RESPONSE + "7/chunk/2 ghij",
            "PUBACK 1",
            "PUBLISH " + RESPONSE + "7/chunk/3 ");
    assertThat(fixture.firmware.lookups()).as("looked up once per request id").isEqualTo(1);
    assertThat(fixture.count(FirmwareMetrics.CHUNKS, "protocol", "mqtt")).isEqualTo(4);
    assertThat(fixture.count(FirmwareMetrics.BYTES, "protocol", "mqtt")).isEqualTo(20);
  }

  @Test
  void should_keep_the_size_of_the_request_id_when_a_later_payload_is_empty() {
    SessionFixture fixture = withFirmware("default-chunk-size = 16");
    SessionClient client = connected(fixture);
    client.send(sdkSubscription());
    client.received();

    client.send(request("1", 0, "\"8\"")); // the Python SDK's JSON-encoded size
    client.send(request("1", 1, ""));
    client.send(request("2", 0, "\"\"")); // a new request id without a size: the default
    client.send(request("3", 1, "0"));

    assertThat(client.received())
        .filteredOn(packet -> packet.startsWith("PUBLISH"))
        .containsExactly(
            "PUBLISH " + RESPONSE + "1/chunk/0 01234567",
            "PUBLISH " + RESPONSE + "1/chunk/1 89abcdef",
            "PUBLISH " + RESPONSE + "2/chunk/0 0123456789abcdef",
            "PUBLISH " + RESPONSE + "3/chunk/1 ghij");
  }

  @Test
  void should_send_at_the_granted_qos_or_at_qos_1_without_a_subscription() {
    SessionFixture fixture = withFirmware();
    SessionClient client = connected(fixture);

    client.send(request("1", 2, "8"));
    assertThat(client.received())
        .containsExactly("PUBACK 1", "PUBLISH#1 " + RESPONSE + "1/chunk/2 ghij");

    client.send(subscribe(2, "v2/fw/response/+/chunk/+", MqttQoS.AT_MOST_ONCE));
    client.send(request("1", 2, "8"));
    assertThat(client.received())
        .containsExactly("SUBACK 2 [0]", "PUBACK 1", "PUBLISH " + RESPONSE + "1/chunk/2 ghij");
  }

  @Test
  void should_refuse_on_the_error_topic_and_stay_connected_when_the_chunk_is_too_large() {
    SessionFixture fixture = withFirmware("max-chunk-size = 8", "default-chunk-size = 8");
    SessionClient client = connected(fixture);
    client.send(subscribe(1, "v2/fw/error", MqttQoS.AT_MOST_ONCE));
    client.received();

    client.send(request("5", 0, "9"));

    assertThat(client.received())
        .containsExactly(
            "PUBLISH v2/fw/error request 5: chunk size 9 is above the maximum of 8 bytes",
            "PUBACK 1");
    assertThat(refused(fixture, "chunk_too_large")).isEqualTo(1);
    assertThat(fixture.firmware.lookups()).isZero();
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_refuse_a_request_it_does_not_understand() {
    SessionFixture fixture = withFirmware();
    SessionClient client = connected(fixture);
    client.send(subscribe(1, "v2/fw/error", MqttQoS.AT_MOST_ONCE));
    client.received();

    client.send(publish("v2/fw/request/1/chunk/x", MqttQoS.AT_LEAST_ONCE, 2, "8"));
    client.send(publish("v2/fw/request/1/2/chunk/0", MqttQoS.AT_LEAST_ONCE, 3, "8"));
    client.send(request("1", 0, "-8"));

    assertThat(client.received())
        .containsExactly(
            "PUBLISH v2/fw/error the chunk number must be a non-negative decimal number",
            "PUBACK 2",
            "PUBLISH v2/fw/error the topic must be v2/fw/request/{requestId}/chunk/{n}, got"
                + " v2/fw/request/1/2/chunk/0",
            "PUBACK 3",
            "PUBLISH v2/fw/error the chunk size must be a non-negative decimal number",
            "PUBACK 1");
    assertThat(refused(fixture, "bad_request")).isEqualTo(3);
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_dead_letter_a_topic_under_v2_fw_request_without_a_chunk() {
    SessionFixture fixture = withFirmware();
    SessionClient client = connected(fixture);

    client.send(publish("v2/fw/request/0", MqttQoS.AT_LEAST_ONCE, 4, "8"));

    assertThat(fixture.deadLetters.writes())
        .extracting(write -> write.deadLetter().topic())
        .containsExactly("v2/fw/request/0");
    fixture.deadLetters.writes().get(0).done().complete(null);
    assertThat(client.received()).containsExactly("PUBACK 4");
    assertThat(refused(fixture, "bad_request")).isZero();
  }

  @Test
  void should_refuse_when_no_firmware_is_assigned() {
    SessionFixture fixture = new SessionFixture(TestConfigs.mqtt());
    fixture.registry.add(TOKEN);
    SessionClient client = connected(fixture);

    client.send(request("9", 0, "8"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            "PUBLISH#1 v2/fw/error request 9: no firmware with data is assigned to this device");
    assertThat(refused(fixture, "no_firmware")).isEqualTo(1);
  }

  @Test
  void should_refuse_with_a_retryable_error_when_the_read_fails() {
    SessionFixture fixture = withFirmware();
    SessionClient client = connected(fixture);
    client.send(subscribe(1, "v2/fw/error", MqttQoS.AT_MOST_ONCE));
    client.received();
    fixture.firmware.failReads(new StoreException(StoreException.Kind.TIMEOUT, "slow"));

    client.send(request("1", 0, "8"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            "PUBLISH v2/fw/error request 1: the firmware could not be read, try again later");
    assertThat(refused(fixture, "read_failed")).isEqualTo(1);

    fixture.firmware.failReads(null);
    client.send(sdkSubscription(), request("1", 0, "8"));
    assertThat(client.received()).contains("PUBLISH " + RESPONSE + "1/chunk/0 01234567");
  }

  @Test
  void should_stop_reading_the_socket_while_max_reads_are_running() {
    SessionFixture fixture = withFirmware("max-reads = 1");
    SessionClient client = connected(fixture);
    client.send(sdkSubscription());
    client.received();
    fixture.firmware.holdReads(true);

    client.send(request("1", 0, "8"));
    client.runTasks();

    assertThat(fixture.firmware.heldReads()).isEqualTo(1);
    assertThat(client.isReading()).isFalse();
    fixture.firmware.completeHeld();
    assertThat(client.received()).contains("PUBLISH " + RESPONSE + "1/chunk/0 01234567");
    assertThat(client.isReading()).isTrue();
  }

  @Test
  void should_grant_the_firmware_filters_and_refuse_others_under_v2() {
    SessionFixture fixture = withFirmware();
    SessionClient client = connected(fixture);

    client.send(
        subscribe(1, "v2/fw/response/+/chunk/+", MqttQoS.AT_LEAST_ONCE),
        subscribe(2, "v2/fw/response/#", MqttQoS.EXACTLY_ONCE),
        subscribe(3, "v2/fw/error", MqttQoS.AT_MOST_ONCE),
        subscribe(4, "v2/fw/anything", MqttQoS.AT_MOST_ONCE));

    assertThat(client.received())
        .containsExactly("SUBACK 1 [1]", "SUBACK 2 [1]", "SUBACK 3 [0]", "SUBACK 4 [128]");
  }
}
