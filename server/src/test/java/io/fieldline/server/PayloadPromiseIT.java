package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.Row;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.TimestampRange;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 11, "the promise holds for every payload": whatever a device publishes is acknowledged only
 * once it is stored whole or dead-lettered whole. A second JSON value or garbage after the first,
 * an unpaired surrogate and a timestamp outside {@link TimestampRange} are refused by the parser,
 * so they are dead-lettered and acknowledged instead of being half stored or failing in the store
 * (no PUBACK, connection closed, resent for ever). A bystander device publishes beside each of
 * them.
 *
 * <p>Runs with {@code ts-ttl} set: then every value is also written with {@code USING TIMESTAMP
 * ts*1000}, the mode where the store's timestamp range is narrowest.
 */
class PayloadPromiseIT extends ServerTestBase {

  private static final String TELEMETRY = "v1/devices/me/telemetry";
  private static final String ATTRIBUTES = "v1/devices/me/attributes";
  private static final Duration PATIENCE = Duration.ofSeconds(30);

  private Device bystanderDevice;
  private Mqtt3AsyncClient bystander;
  private final List<CompletableFuture<Mqtt3Publish>> bystanderSends = new ArrayList<>();
  private int devices;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("fieldline.cassandra.ts-ttl", 86_400);
  }

  @BeforeAll
  void connectBystander() {
    bystanderDevice = createDevice("bystander", "bystander-token");
    Mqtt3BlockingClient client = client("bystander");
    client.connectWith().simpleAuth().username("bystander-token").applySimpleAuth().send();
    bystander = client.toAsync();
  }

  @AfterAll
  void disconnectBystander() {
    bystander.disconnect().join();
  }

  @AfterEach
  void bystanderLostNothing() {
    publishAsBystander(5);
    assertThat(CompletableFuture.allOf(bystanderSends.toArray(new CompletableFuture<?>[0])))
        .succeedsWithin(PATIENCE);
    // Every bystander message was acknowledged, and an acknowledged message is a stored one.
    assertThat(rows(bystanderDevice)).isEqualTo(bystanderSends.size());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"two1\":1}{\"two2\":2}",
        "[{\"a\":1}]{\"b\":2}",
        "{\"ts\":1700000000000,\"values\":{\"a\":1}}{\"ts\":1700000000001,\"values\":{\"a\":2}}",
        "{\"a\":1} trailing garbage",
        "{\"a\":1}}",
        "{\"sur\\ud800\":1}",
        "{\"v\":\"x\\udfffy\"}",
        "{\"ok\":1,\"nested\":{\"k\":[\"\\ud800\"]}}",
        "{\"ts\":1700000000000,\"values\":{\"ok\":1,\"bad\\udc00\":2}}",
        "{\"ts\":9223372036854775808,\"values\":{\"a\":1}}",
        "{\"ts\":-9223372036854775808,\"values\":{\"a\":1}}",
        "{\"ts\":9223372036854775807,\"values\":{\"a\":1}}",
        "[{\"ts\":1700000000000,\"values\":{\"a\":1}},{\"ts\":9223372036854776,\"values\":{\"a\":2}}]",
        "{\"ts\":-9223372036854776,\"values\":{\"a\":1}}"
      })
  void should_ack_and_dead_letter_the_whole_payload_when_telemetry_cannot_be_stored_whole(
      String payload) {
    shouldAckAndDeadLetter(TELEMETRY, payload);
  }

  @ParameterizedTest
  @ValueSource(strings = {"{\"a\":1}{\"b\":2}", "{\"a\":1} x", "{\"sur\\ud800\":1,\"ok\":2}"})
  void should_ack_and_dead_letter_the_whole_payload_when_attributes_cannot_be_stored_whole(
      String payload) {
    shouldAckAndDeadLetter(ATTRIBUTES, payload);
  }

  @Test
  void should_store_every_value_when_ts_is_at_either_end_of_the_storable_range() {
    Device device = createDevice("edges", "edges-token");
    Mqtt3BlockingClient client = connect("edges-token");
    publishAsBystander(5);
    publish(
        client,
        TELEMETRY,
        "[{\"ts\":"
            + TimestampRange.MAX
            + ",\"values\":{\"a\":1}},{\"ts\":"
            + TimestampRange.MIN
            + ",\"values\":{\"a\":2}}]  \n");
    publish(client, ATTRIBUTES, "{\"fw\":\"\\ud83d\\ude00\"}\n");
    client.disconnect();
    assertThat(rows(device)).isEqualTo(2);
    assertThat(
            cql.execute("SELECT ts FROM ts_kv_latest WHERE device_id = ?", device.id().value())
                .one()
                .getLong("ts"))
        .isEqualTo(TimestampRange.MAX);
    assertThat(attributeRows(device)).isEqualTo(1);
    assertThat(deadLetters(device)).isEmpty();
  }

  private void shouldAckAndDeadLetter(String topic, String payload) {
    Device device = createDevice("device-" + ++devices, "device-token-" + devices);
    Mqtt3BlockingClient client = connect("device-token-" + devices);
    publishAsBystander(5);
    // Returns only when the PUBACK arrived: the dead letter is stored by then.
    publish(client, topic, payload);
    publishAsBystander(5);

    assertThat(rows(device)).as("time-series rows").isZero();
    assertThat(attributeRows(device)).as("attribute rows").isZero();
    List<Row> letters = deadLetters(device);
    assertThat(letters).hasSize(1);
    assertThat(letters.get(0).getString("topic")).isEqualTo(topic);
    assertThat(bytes(letters.get(0).getByteBuffer("payload")))
        .isEqualTo(payload.getBytes(StandardCharsets.UTF_8));
    assertThat(letters.get(0).getString("reason")).isNotBlank();

    // The connection survived: the next good message is stored.
    publish(client, topic, "{\"after\":1}");
    assertThat(rows(device) + attributeRows(device)).isEqualTo(1);
    client.disconnect();
  }

  private void publishAsBystander(int messages) {
    for (int i = 0; i < messages; i++) {
      long ts = 1_700_000_000_000L + bystanderSends.size();
      bystanderSends.add(
          bystander
              .publishWith()
              .topic(TELEMETRY)
              .qos(MqttQos.AT_LEAST_ONCE)
              .payload(
                  ("{\"ts\":" + ts + ",\"values\":{\"ok\":1}}").getBytes(StandardCharsets.UTF_8))
              .send());
    }
  }

  private static void publish(Mqtt3BlockingClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  private List<Row> deadLetters(Device device) {
    return cql.execute(
            "SELECT topic, reason, payload FROM dead_letters WHERE device_id = ?",
            device.id().value())
        .all();
  }

  private long attributeRows(Device device) {
    return cql.execute(
            "SELECT count(*) FROM attributes_kv WHERE device_id = ? ALLOW FILTERING",
            device.id().value())
        .one()
        .getLong(0);
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  private Mqtt3BlockingClient connect(String token) {
    Mqtt3BlockingClient client = client(token);
    client.connectWith().simpleAuth().username(token).applySimpleAuth().send();
    return client;
  }
}
