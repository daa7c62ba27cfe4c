package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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
 * Cassandra is stopped while a gateway publishes messages of 100 children each, their values
 * without {@code ts} (stamped by the server): the message being written when the writes start
 * failing gets no PUBACK, some of its children's rows stored and some not; after recovery the
 * gateway's CleanSession=0 reconnect retransmits it (Paho, DUP), and every message ends up stored
 * exactly once for every child — no second copy of the rows the first attempt had stored.
 */
class GatewayOutageIT extends GatewayTestBase {

  private static final int CHILDREN = 100;
  private static final int INFLIGHT = 10;

  @Override
  protected Map<String, Object> overrides() {
    return Map.of("datastax-java-driver.basic.request.timeout", "3 seconds");
  }

  @AfterAll
  void cassandraRunsAgainForOtherClasses() {
    cassandra.start();
  }

  @Test
  void should_store_each_message_once_when_cassandra_stops_mid_stream_and_the_gateway_resends()
      throws Exception {
    createDevice("gw-outage", "gw-outage-token", true);
    Map<Integer, Integer> seqByMessageId = new ConcurrentHashMap<>();
    Set<Integer> acked = ConcurrentHashMap.newKeySet();
    AtomicInteger connectionsLost = new AtomicInteger();
    MqttAsyncClient client =
        new MqttAsyncClient(
            "tcp://127.0.0.1:" + mqttPort(), "gw-outage-client", new MemoryPersistence());
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
            synchronized (seqByMessageId) { // publish() records the id under the same lock
              acked.add(seqByMessageId.get(token.getMessageId()));
            }
          }
        });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setUserName("gw-outage-token");
    options.setCleanSession(false);
    options.setMaxInflight(INFLIGHT);
    client.connect(options).waitForCompletion(10_000);

    // Message 0 creates the children; then messages flow, up to the client's window of ten in
    // flight, so that when the writes start failing some messages are stored in part and some in
    // whole behind one that failed: none of them acknowledged, all of them resent.
    assertThat(publish(client, 0, seqByMessageId)).isTrue();
    await().atMost(Duration.ofSeconds(60)).until(() -> acked.contains(0));
    List<Integer> published = new ArrayList<>(List.of(0));
    Thread publisher =
        new Thread(
            () -> {
              for (int seq = 1; seq < 2_000 && connectionsLost.get() == 0; seq++) {
                try {
                  await()
                      .atMost(Duration.ofSeconds(30))
                      .pollInterval(Duration.ofMillis(2))
                      .until(
                          () ->
                              client.getPendingDeliveryTokens().length < INFLIGHT
                                  || connectionsLost.get() > 0);
                  if (connectionsLost.get() > 0 || !publish(client, seq, seqByMessageId)) {
                    break;
                  }
                  synchronized (published) {
                    published.add(seq);
                  }
                } catch (Exception e) {
                  break;
                }
              }
            },
            "gateway-publisher");
    publisher.start();
    await().atMost(Duration.ofSeconds(30)).until(() -> acked.size() >= 5);

    // A clean stop while messages flow (CassandraOutageIT explains why not kill -9).
    cassandra.stop();
    await().atMost(Duration.ofSeconds(60)).until(() -> connectionsLost.get() >= 1);
    publisher.join(60_000);
    List<Integer> sent;
    synchronized (published) {
      sent = List.copyOf(published);
    }
    assertThat(acked)
        .as("the message cut by the outage is not acknowledged")
        .hasSizeLessThan(sent.size());
    assertThat(get("/health/ready").statusCode()).isEqualTo(503);

    cassandra.start();
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> get("/health/ready").statusCode() == 200);
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(() -> cql.execute("SELECT release_version FROM system.local").one() != null);

    // Same client, CleanSession=0: the session resumes and Paho resends what was not
    // acknowledged, with DUP (MQTT 3.1.1 §4.4).
    IMqttToken reconnect = client.connect(options);
    reconnect.waitForCompletion(30_000);
    assertThat(reconnect.getSessionPresent()).isTrue();
    await().atMost(Duration.ofSeconds(60)).until(() -> acked.containsAll(sent));
    assertThat(metric("fieldline_mqtt_gateway_timestamps_reused_total"))
        .as("the retransmission got its first copy's time")
        .isGreaterThanOrEqualTo(1);

    Map<UUID, Map<String, Integer>> rows = rowCounts();
    Map<String, JsonNode> children = listed("outage-");
    assertThat(children).hasSize(CHILDREN);
    Map<String, Integer> once = new HashMap<>();
    for (int seq : sent) {
      once.put("m" + seq, 1);
    }
    for (Map.Entry<String, JsonNode> child : children.entrySet()) {
      assertThat(rows.get(UUID.fromString(child.getValue().at("/id/id").asText())))
          .as("every message stored once for %s", child.getKey())
          .isEqualTo(once);
    }
    client.disconnect().waitForCompletion(5_000);
    client.close();
  }

  /**
   * Publishes message {@code seq}: every child gets key {@code m<seq>}, without ts (a key per
   * message: two messages stamped in the same millisecond must not overwrite each other here).
   */
  private static boolean publish(MqttAsyncClient client, int seq, Map<Integer, Integer> ids)
      throws MqttException {
    StringBuilder json = new StringBuilder("{");
    for (int i = 0; i < CHILDREN; i++) {
      json.append(i == 0 ? "" : ",").append("\"outage-").append(i).append("\":{\"m");
      json.append(seq).append("\":").append(seq).append('}');
    }
    byte[] payload = json.append('}').toString().getBytes(StandardCharsets.UTF_8);
    synchronized (ids) {
      try {
        IMqttDeliveryToken token = client.publish("v1/gateway/telemetry", payload, 1, false);
        ids.put(token.getMessageId(), seq);
        return true;
      } catch (MqttException e) {
        if (e.getReasonCode() != MqttException.REASON_CODE_CLIENT_NOT_CONNECTED) {
          throw e;
        }
        return false;
      }
    }
  }
}
