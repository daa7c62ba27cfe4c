package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.device.Device;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Cassandra is stopped while a device publishes: nothing unstored is acknowledged, Fieldline stays
 * up, and once Cassandra is back the device's CleanSession=0 reconnect retransmits what was not
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
    MqttAsyncClient client =
        new MqttAsyncClient(
            "tcp://127.0.0.1:" + mqttPort(), "outage-client", new MemoryPersistence());
    client.setCallback(
        new MqttCallback() {
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
    assertThat(rows(device)).as("every acknowledged message is readable").isEqualTo(20);

    // A clean stop: this test is about Fieldline while Cassandra is gone, not about Cassandra's
    // own crash recovery (the cluster ITs kill -9 Fieldline nodes; CassandraStorageIT and the
    // launcher's IT kill -9 Cassandra).
    cassandra.stop();
    // The burst may outrun the server closing the connection after the first failed write;
    // whatever Paho could not send any more is published again after the reconnect.
    List<Integer> unsent = publish(client, 20, 50, tsByMessageId);
    // The first failed write closes the connection (no PUBACK for it).
    await().atMost(Duration.ofSeconds(60)).until(() -> connectionsLost.get() >= 1);
    assertThat(get("/health/live", "").statusCode()).isEqualTo(200);
    assertThat(get("/health/ready", "").statusCode()).isEqualTo(503);
    assertThat(acked).as("not everything can have been acknowledged").hasSizeLessThan(50);
    Set<Long> ackedBeforeRecovery = Set.copyOf(acked);

    cassandra.start();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> get("/health/ready", "").statusCode() == 200);
    // The test's own driver session reconnects on its own schedule.
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(() -> cql.execute("SELECT release_version FROM system.local").one() != null);
    for (long ts : ackedBeforeRecovery) {
      assertThat(stored(device, ts))
          .as(
              "acknowledged message ts=%d is stored (acked %s, stored rows %d)",
              ts, new java.util.TreeSet<>(ackedBeforeRecovery), rows(device))
          .isTrue();
    }

    // Same client, CleanSession=0: the server resumes the session and Paho resends its in-flight
    // messages (MQTT 3.1.1 §4.4); the server keeps working without a restart.
    IMqttToken reconnect = client.connect(options);
    reconnect.waitForCompletion(30_000);
    assertThat(reconnect.getSessionPresent()).isTrue();
    assertThat(publish(client, unsent, tsByMessageId)).isEmpty();
    await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() == 50);
    assertThat(rows(device)).as("every message stored exactly once").isEqualTo(50);
    client.disconnect().waitForCompletion(5_000);
    client.close();
  }

  private boolean stored(Device device, long ts) {
    return cql.execute(
                "SELECT ts FROM ts_kv WHERE device_id = ? AND key = 'seq' AND ts = ?"
                    + " ALLOW FILTERING",
                device.id().value(),
                ts)
            .one()
        != null;
  }

  private static List<Integer> publish(
      MqttAsyncClient client, int from, int to, Map<Integer, Long> tsByMessageId) throws Exception {
    return publish(client, IntStream.range(from, to).boxed().toList(), tsByMessageId);
  }

  /** Publishes message {@code i} for each i; returns those the client could not send. */
  private static List<Integer> publish(
      MqttAsyncClient client, List<Integer> sequence, Map<Integer, Long> tsByMessageId)
      throws Exception {
    List<Integer> unsent = new ArrayList<>();
    for (int i : sequence) {
      long ts = BASE_TS + i;
      byte[] payload =
          ("{\"ts\":" + ts + ",\"values\":{\"seq\":" + i + "}}").getBytes(StandardCharsets.UTF_8);
      synchronized (tsByMessageId) {
        try {
          IMqttDeliveryToken token = client.publish("v1/devices/me/telemetry", payload, 1, false);
          tsByMessageId.put(token.getMessageId(), ts);
        } catch (MqttException e) {
          if (e.getReasonCode() != MqttException.REASON_CODE_CLIENT_NOT_CONNECTED) {
            throw e;
          }
          unsent.add(i);
        }
      }
    }
    return unsent;
  }
}
