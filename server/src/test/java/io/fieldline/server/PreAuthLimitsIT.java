package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.exceptions.Mqtt3ConnAckException;
import com.hivemq.client.mqtt.mqtt3.message.connect.connack.Mqtt3ConnAckReturnCode;
import io.fieldline.common.device.Device;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Pre-authentication limits (issue 11, items 2 and 10) against a live server, with raw sockets
 * where a client library would be too polite: a trickled CONNECT meets the connect deadline,
 * unauthenticated sockets at their cap do not stop authenticated devices, a spent failed-auth
 * budget refuses and then recovers, a client id with U+0000 closes. A bystander device publishes
 * QoS 1 through every test and each acknowledged message is stored. 127.0.0.1 only; no loopback
 * exemption is needed (the limits are per address and the tests stay within them).
 */
class PreAuthLimitsIT extends BadClientTestBase {

  private static final int UNAUTHENTICATED_CAP = 5;
  private static final String TOPIC = "v1/devices/me/telemetry";

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.mqtt.connect-timeout",
        "4 s",
        "fieldline.mqtt.max-connections",
        50,
        "fieldline.mqtt.max-unauthenticated-connections",
        UNAUTHENTICATED_CAP,
        "fieldline.mqtt.per-address-failed-auth-burst",
        3,
        "fieldline.mqtt.per-address-failed-auth-refill",
        "2 s");
  }

  @Test
  void should_close_at_the_deadline_when_connect_is_trickled_one_byte_per_second()
      throws Exception {
    double before = metric("fieldline_mqtt_rejected_total{reason=\"connect_timeout\"");
    byte[] connect = RawMqtt.connect("trickler", bystander.token(), true);
    Socket socket = socket();
    OutputStream out = socket.getOutputStream();
    AtomicInteger sent = new AtomicInteger();
    ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
    try {
      // A deliberate pause between bytes (the attack), not a synchronisation.
      trickle.scheduleAtFixedRate(
          () -> {
            int next = sent.get();
            if (next < connect.length) {
              try {
                out.write(connect[next]);
                out.flush();
                sent.incrementAndGet();
              } catch (IOException closedByServer) {
                // expected once the deadline has passed
              }
            }
          },
          0,
          1,
          TimeUnit.SECONDS);
      bystander.publishesAndAllStored();

      assertThat(readUntilClosed(socket.getInputStream()))
          .as("closed without CONNACK")
          .isEqualTo(-1);
    } finally {
      trickle.shutdownNow();
    }
    assertThat(sent.get()).as("bytes sent before the close").isLessThan(connect.length);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(metric("fieldline_mqtt_rejected_total{reason=\"connect_timeout\""))
                    .isGreaterThan(before));
  }

  @Test
  void should_keep_serving_devices_when_unauthenticated_sockets_reach_their_cap() throws Exception {
    double refusedBefore = metric("fieldline_mqtt_rejected_total{reason=\"unauthenticated_limit\"");
    for (int i = 0; i < UNAUTHENTICATED_CAP; i++) {
      socket(); // never sends CONNECT
    }
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> metric("fieldline_mqtt_connections_unauthenticated") >= UNAUTHENTICATED_CAP);

    // One more unauthenticated socket is closed at once, long before the connect deadline.
    try (Socket extra = new Socket("127.0.0.1", mqttPort())) {
      extra.setSoTimeout(3_000);
      assertThat(readUntilClosed(extra.getInputStream())).isEqualTo(-1);
    }
    assertThat(metric("fieldline_mqtt_rejected_total{reason=\"unauthenticated_limit\""))
        .isGreaterThan(refusedBefore);
    // The authenticated device is not locked out while the cap is full.
    bystander.publishesAndAllStored();
    bystander.publishesAndAllStored();

    // The deadline frees the slots; a new device then connects and its messages are stored.
    Device device = createDevice("late-device", "late-device-token");
    Mqtt3BlockingClient late = client("late-device");
    await()
        .atMost(Duration.ofSeconds(20))
        .ignoreExceptions()
        .until(
            () -> {
              late.connectWith()
                  .simpleAuth()
                  .username("late-device-token")
                  .applySimpleAuth()
                  .send();
              return true;
            });
    for (int i = 0; i < 5; i++) {
      publish(late, 1_700_000_000_000L + i);
    }
    assertThat(rows(device)).isEqualTo(5);
    late.disconnect();
    assertThat(metric("fieldline_mqtt_rejected_total{reason=\"connect_timeout\""))
        .isGreaterThanOrEqualTo(UNAUTHENTICATED_CAP);
  }

  @Test
  void should_refuse_then_recover_when_failed_auth_budget_is_spent() {
    Device device = createDevice("guessed-device", "guessed-device-token");
    for (int i = 0; i < 3; i++) {
      assertRefused("guess-" + i, Mqtt3ConnAckReturnCode.NOT_AUTHORIZED);
    }
    // Budget spent: even the right token is refused, with 0x03 and without a lookup.
    assertRefused("guessed-device-token", Mqtt3ConnAckReturnCode.SERVER_UNAVAILABLE);
    assertThat(metric("fieldline_mqtt_connects_total{result=\"rate_limited\"")).isGreaterThan(0);
    bystander.publishesAndAllStored();

    Mqtt3BlockingClient device1 = client("guessed-device");
    await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .until(
            () -> {
              device1
                  .connectWith()
                  .simpleAuth()
                  .username("guessed-device-token")
                  .applySimpleAuth()
                  .send();
              return true;
            });
    publish(device1, 1_700_000_000_000L);
    assertThat(rows(device)).isEqualTo(1);
    device1.disconnect();
  }

  @Test
  void should_close_without_connack_when_client_id_contains_nul() throws Exception {
    double before = metric("fieldline_mqtt_rejected_total{reason=\"bad_utf8\"");
    Socket socket = socket();
    OutputStream out = socket.getOutputStream();
    out.write(RawMqtt.connect("evil\u0000id\nERROR forged", bystander.token(), true));
    out.flush();

    InputStream in = socket.getInputStream();
    assertThat(readUntilClosed(in)).as("closed without CONNACK").isEqualTo(-1);
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () ->
                assertThat(metric("fieldline_mqtt_rejected_total{reason=\"bad_utf8\""))
                    .isGreaterThan(before));
    bystander.publishesAndAllStored();
  }

  private void assertRefused(String token, Mqtt3ConnAckReturnCode code) {
    assertThatThrownBy(
            () ->
                client("guesser")
                    .connectWith()
                    .simpleAuth()
                    .username(token)
                    .applySimpleAuth()
                    .send())
        .isInstanceOfSatisfying(
            Mqtt3ConnAckException.class,
            e -> assertThat(e.getMqttMessage().getReturnCode()).isEqualTo(code));
  }

  private static void publish(Mqtt3BlockingClient client, long ts) {
    client
        .publishWith()
        .topic(TOPIC)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(("{\"ts\":" + ts + ",\"values\":{\"ok\":1}}").getBytes(StandardCharsets.UTF_8))
        .send();
  }
}
