package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.Device;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Cassandra dies while a device publishes: nothing unstored is acknowledged, Fieldline stays up,
 * and once Cassandra is back the device's CleanSession=0 reconnect retransmits what was not
 * acknowledged; every message ends up stored exactly once (device-supplied timestamps).
 */
class CassandraOutageIT extends ServerTestBase {

  private static final long BASE_TS = 1_700_200_000_000L;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("datastax-java-driver.basic.request.timeout", "3 seconds");
  }

  @AfterAll
  void cassandraRunsAgainForOtherClasses() {
    cassandra.start();
  }

  @Test
  void should_ack_only_stored_messages_and_recover_when_cassandra_comes_back() throws Exception {
    Device device = createDevice("outage", "outage-token");
    Map<Integer, Long> tsByMessageId = new ConcurrentHashMap<>();
    Set<Long> acked = ConcurrentHashMap.newKeySet();
    AtomicInteger connectionsLost = new AtomicInteger();
    MqttAsyncClient client = new MqttAsyncClient(
        "tcp://127.0.0.1:" + mqttPort(), "outage-client", new MemoryPersistence());
    client.setCallback(new MqttCallback() {
      @Override
      public void connectionLost(Throwable cause) {
        connectionsLost.incrementAndGet();
      }

      @Override
      public void messageArrived(String topic, MqttMessage message) {}

      @Override
      public void deliveryComplete(IMqttDeliveryToken token) {
        synchronized (tsByMessageId) { // publish() records the id under the same lock
          acked.add(tsByMessageId.get(token.getMessageId()));
        }
      }
    });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setUserName("outage-token");
    options.setCleanSession(false);
    options.setMaxInflight(100);
    client.connect(options).waitForCompletion(10_000);

    publish(client, 0, 20, tsByMessageId);
    await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() == 20);

    cassandra.kill();
    publish(client, 20, 50, tsByMessageId);
    // The first failed write closes the connection (no PUBACK for it).
    await().atMost(Duration.ofSeconds(60)).until(() -> connectionsLost.get() >= 1);
    assertThat(get("/health/live", "").statusCode()).isEqualTo(200);
    assertThat(get("/health/ready", "").statusCode()).isEqualTo(503);
    assertThat(acked).as("not everything can have been acknowledged").hasSizeLessThan(50);
    Set<Long> ackedBeforeRecovery = Set.copyOf(acked);

    cassandra.start();
    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
        .until(() -> get("/health/ready", "").statusCode() == 200);
    for (long ts : ackedBeforeRecovery) {
      assertThat(stored(device, ts)).as("acknowledged message ts=%d is stored", ts).isTrue();
    }

    // Same client, CleanSession=0: the server resumes the session and Paho resends its in-flight
    // messages (MQTT 3.1.1 §4.4); the server keeps working without a restart.
    IMqttToken reconnect = client.connect(options);
    reconnect.waitForCompletion(30_000);
    assertThat(reconnect.getSessionPresent()).isTrue();
    await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() == 50);
    assertThat(rows(device)).as("every message stored exactly once").isEqualTo(50);
    client.disconnect().waitForCompletion(5_000);
    client.close();
  }

  private boolean stored(Device device, long ts) {
    return cql.execute("SELECT ts FROM ts_kv WHERE device_id = ? AND key = 'seq' AND ts = ?"
        + " ALLOW FILTERING", device.id().value(), ts).one() != null;
  }

  private static void publish(
      MqttAsyncClient client, int from, int to, Map<Integer, Long> tsByMessageId) throws Exception {
    for (int i = from; i < to; i++) {
      long ts = BASE_TS + i;
      byte[] payload = ("{\"ts\":" + ts + ",\"values\":{\"seq\":" + i + "}}")
          .getBytes(StandardCharsets.UTF_8);
      synchronized (tsByMessageId) {
        IMqttDeliveryToken token = client.publish("v1/devices/me/telemetry", payload, 1, false);
        tsByMessageId.put(token.getMessageId(), ts);
      }
    }
  }
}
