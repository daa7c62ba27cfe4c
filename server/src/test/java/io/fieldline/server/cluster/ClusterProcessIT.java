package io.fieldline.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.datastax.oss.driver.api.core.cql.Row;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.cluster.HashRing;
import io.fieldline.common.DeviceId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Fieldline nodes as separate processes (three, then a fourth joining), a real ZooKeeper and the
 * module's shared Cassandra. One cluster for the whole class; the tests run in order and each
 * leaves the cluster usable for the next: forwarding, takeover, ZooKeeper session expiry, an owner
 * killed with -9 under load, a node joining under load.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterProcessIT {

  private static final String TOPIC = "v1/devices/me/telemetry";

  private LocalCluster cluster;
  private NodeProcess n1;
  private NodeProcess n2;
  private NodeProcess n3;
  private final List<NodeProcess> up = new CopyOnWriteArrayList<>();

  @BeforeAll
  void startCluster() throws Exception {
    Path work = Files.createDirectories(Path.of("target", "cluster-it").toAbsolutePath());
    cluster = new LocalCluster(SharedCassandra.get(), work);
    List<NodeProcess> nodes = cluster.start("n1", "n2", "n3");
    n1 = nodes.get(0);
    n2 = nodes.get(1);
    n3 = nodes.get(2);
    up.addAll(nodes);
    awaitRings(3);
  }

  @AfterAll
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Every node that is up has a ring of {@code size} nodes. */
  private void awaitRings(int size) {
    await("rings of " + size)
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                up.stream()
                    .allMatch(
                        node -> cluster.metric(node, "fieldline_cluster_ring_nodes") == size));
  }

  private List<Integer> upPorts() {
    List<Integer> ports = new ArrayList<>();
    for (NodeProcess node : up) {
      ports.add(node.mqttPort());
    }
    return ports;
  }

  private static byte[] telemetry(long ts, long seq) {
    return ("{\"ts\":" + ts + ",\"values\":{\"seq\":" + seq + "}}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private Set<Long> storedTimestamps(DeviceId device) {
    Set<Long> stored = new HashSet<>();
    for (Row row :
        cluster
            .cql()
            .execute(
                "SELECT ts FROM ts_kv WHERE device_id = ? AND key = 'seq' ALLOW FILTERING",
                device.value())) {
      stored.add(row.getLong(0));
    }
    return stored;
  }

  private long rows(DeviceId device) {
    return cluster
        .cql()
        .execute("SELECT count(*) FROM ts_kv WHERE device_id = ? ALLOW FILTERING", device.value())
        .one()
        .getLong(0);
  }

  private static Mqtt3AsyncClient connect(String clientId, String token, int port) {
    Mqtt3AsyncClient client =
        Mqtt3Client.builder()
            .identifier(clientId)
            .serverHost("127.0.0.1")
            .serverPort(port)
            .buildAsync();
    client
        .connectWith()
        .cleanSession(true)
        .simpleAuth()
        .username(token)
        .applySimpleAuth()
        .send()
        .orTimeout(10, TimeUnit.SECONDS)
        .join();
    return client;
  }

  @Test
  @Order(1)
  void should_store_each_message_once_and_ack_after_the_write_when_connected_to_a_non_owner()
      throws MqttException {
    HashRing ring = LocalCluster.ring(List.of("n1", "n2", "n3"));
    DeviceId device;
    String token;
    int attempt = 0;
    do { // a device the ring gives to n2, to connect to n1
      token = "forwarded-" + attempt;
      device = cluster.createDevice(n1, "forwarded-" + attempt++, token);
    } while (!"n2".equals(ring.ownerOf(device)));
    double forwardedBefore = cluster.metric(n1, "fieldline_cluster_forwarded_total");
    double receivedBefore = cluster.metric(n2, "fieldline_cluster_received_total");

    // Paho reports PUBACKs on one callback thread in the order they arrive.
    long base = 1_700_300_000_000L;
    Map<Integer, Long> tsByMessageId = new ConcurrentHashMap<>();
    List<Long> ackOrder = new CopyOnWriteArrayList<>();
    List<Long> missingAtAck = new CopyOnWriteArrayList<>();
    DeviceId id = device;
    MqttAsyncClient client =
        new MqttAsyncClient(
            "tcp://127.0.0.1:" + n1.mqttPort(), "forwarded", new MemoryPersistence());
    client.setCallback(
        new MqttCallback() {
          @Override
          public void connectionLost(Throwable cause) {}

          @Override
          public void messageArrived(String topic, MqttMessage message) {}

          @Override
          public void deliveryComplete(IMqttDeliveryToken delivered) {
            long ts;
            synchronized (tsByMessageId) { // publish() records the id under the same lock
              ts = tsByMessageId.get(delivered.getMessageId());
            }
            // Checked when the PUBACK arrives: the row must already be in Cassandra.
            if (!storedTimestamps(id).contains(ts)) {
              missingAtAck.add(ts);
            }
            ackOrder.add(ts);
          }
        });
    MqttConnectOptions options = new MqttConnectOptions();
    options.setUserName(token);
    options.setMaxInflight(100);
    client.connect(options).waitForCompletion(10_000);
    for (int i = 0; i < 100; i++) {
      long ts = base + i;
      synchronized (tsByMessageId) {
        IMqttDeliveryToken sent = client.publish(TOPIC, telemetry(ts, i), 1, false);
        tsByMessageId.put(sent.getMessageId(), ts);
      }
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> ackOrder.size() == 100);
    client.disconnect().waitForCompletion(5_000);
    client.close();

    assertThat(missingAtAck).as("messages acknowledged before they were stored").isEmpty();
    assertThat(ackOrder).as("PUBACKs in publish order").isSorted().hasSize(100);
    assertThat(rows(device)).as("each message stored once").isEqualTo(100);
    assertThat(cluster.metric(n1, "fieldline_cluster_forwarded_total") - forwardedBefore)
        .as("n1 forwarded them")
        .isGreaterThanOrEqualTo(100);
    assertThat(cluster.metric(n2, "fieldline_cluster_received_total") - receivedBefore)
        .as("n2, the owner, stored them")
        .isGreaterThanOrEqualTo(100);
    // The newest 'seq' row (ts_kv clusters ts DESC; latest values are read from it).
    Row latest =
        cluster
            .cql()
            .execute(
                "SELECT long_v FROM ts_kv WHERE device_id = ? AND key = 'seq' LIMIT 1 ALLOW"
                    + " FILTERING",
                device.value())
            .one();
    assertThat(latest.getLong(0)).as("latest value is the newest").isEqualTo(99);
  }

  @Test
  @Order(2)
  void should_close_the_first_session_when_the_device_connects_to_a_second_node() {
    DeviceId device = cluster.createDevice(n1, "roaming", "roaming-token");
    AtomicBoolean firstClosed = new AtomicBoolean();
    Mqtt3AsyncClient first =
        Mqtt3Client.builder()
            .identifier("roaming-1")
            .serverHost("127.0.0.1")
            .serverPort(n1.mqttPort())
            .addDisconnectedListener(context -> firstClosed.set(true))
            .buildAsync();
    first.connectWith().simpleAuth().username("roaming-token").applySimpleAuth().send().join();
    assertThat(first.getState().isConnected()).isTrue();

    Mqtt3AsyncClient second = connect("roaming-2", "roaming-token", n2.mqttPort());
    await().atMost(Duration.ofSeconds(15)).untilTrue(firstClosed);
    second
        .publishWith()
        .topic(TOPIC)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(telemetry(1_700_400_000_000L, 1))
        .send()
        .orTimeout(30, TimeUnit.SECONDS)
        .join();
    assertThat(second.getState().isConnected()).isTrue();
    assertThat(storedTimestamps(device)).containsExactly(1_700_400_000_000L);
    assertThat(cluster.metric(n1, "fieldline_cluster_takeovers_total")).isPositive();
    second.disconnect().join();
  }

  @Test
  @Order(3)
  void should_leave_the_ring_and_come_back_when_its_zookeeper_session_expires() {
    // A frozen process (a long GC pause) sends no heartbeats: ZooKeeper expires its session.
    n3.suspend();
    up.remove(n3);
    try {
      awaitRings(2);
      assertThat(cluster.registered()).containsExactlyInAnyOrder("n1", "n2");
    } finally {
      n3.resume();
      up.add(n3);
    }
    // Thawed, it finds its session expired, stops claiming, re-registers in a new session.
    awaitRings(3);
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.status(n3, "/health/ready") == 200);
    assertThat(cluster.metric(n3, "fieldline_cluster_claiming")).isEqualTo(1);
    assertThat(cluster.registered()).containsExactlyInAnyOrder("n1", "n2", "n3");
  }

  @Test
  @Order(4)
  void should_keep_every_acknowledged_message_when_an_owner_is_killed_under_load() {
    List<NodeProcess> nodes = List.of(n1, n2, n3);
    try (DeviceFleet fleet = new DeviceFleet(this::upPorts, Duration.ofMillis(150))) {
      for (int i = 0; i < 200; i++) {
        DeviceId id = cluster.createDevice(n1, "kill-" + i, "kill-" + i);
        fleet.add(id, "kill-" + i, 1_700_500_000_000L, nodes.get(i % 3).mqttPort());
      }
      fleet.start();
      await().atMost(Duration.ofSeconds(60)).until(() -> fleet.ackedCount() >= 1_000);

      n3.kill(); // SIGKILL: its in-flight writes and forwarded messages die with it
      up.remove(n3);
      Map<DeviceId, Set<Long>> ackedAtKill = fleet.ackedSnapshot();
      for (Map.Entry<DeviceId, Set<Long>> device : ackedAtKill.entrySet()) {
        assertThat(storedTimestamps(device.getKey()))
            .as("every message acknowledged before the kill is stored")
            .containsAll(device.getValue());
      }

      long ackedAtKillCount = fleet.ackedCount();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> fleet.ackedCount() >= ackedAtKillCount + 1_000);
      fleet.stop();
      await().atMost(Duration.ofSeconds(90)).until(fleet::drained);

      assertThat(fleet.reconnects())
          .as("devices of the dead node reconnected elsewhere")
          .isPositive();
      long total = 0;
      for (DeviceFleet.Device device : fleet.devices()) {
        Set<Long> sent = device.sent();
        assertThat(storedTimestamps(device.id))
            .as("device %s: all sent, each once", device.id)
            .isEqualTo(sent);
        assertThat(rows(device.id)).isEqualTo(sent.size());
        total += sent.size();
      }
      assertThat(total).isGreaterThanOrEqualTo(2_000);
    }
    awaitRings(2);
  }

  @Test
  @Order(5)
  void should_lose_nothing_acknowledged_when_a_node_joins_under_load() {
    List<NodeProcess> nodes = List.of(n1, n2);
    try (DeviceFleet fleet = new DeviceFleet(this::upPorts, Duration.ofMillis(150))) {
      for (int i = 0; i < 200; i++) {
        DeviceId id = cluster.createDevice(n1, "join-" + i, "join-" + i);
        fleet.add(id, "join-" + i, 1_700_600_000_000L, nodes.get(i % 2).mqttPort());
      }
      fleet.start();
      await().atMost(Duration.ofSeconds(60)).until(() -> fleet.ackedCount() >= 500);

      NodeProcess n4 = cluster.start("n4").get(0);
      up.add(n4);
      awaitRings(3);
      // Ownership moved: the newcomer stores messages forwarded to it.
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> cluster.metric(n4, "fieldline_cluster_received_total") >= 200);
      fleet.stop();
      await().atMost(Duration.ofSeconds(90)).until(fleet::drained);

      for (DeviceFleet.Device device : fleet.devices()) {
        Set<Long> stored = storedTimestamps(device.id);
        assertThat(stored)
            .as("device %s: every acknowledged message stored", device.id)
            .containsAll(device.acked());
        assertThat(stored).as("device %s: all sent, each once", device.id).isEqualTo(device.sent());
      }
    }
  }
}
