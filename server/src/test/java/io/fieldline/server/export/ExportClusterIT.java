package io.fieldline.server.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.DeviceId;
import io.fieldline.server.cluster.DeviceFleet;
import io.fieldline.server.cluster.LocalCluster;
import io.fieldline.server.cluster.NodeProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Export from a cluster of three processes (a real ZooKeeper, the shared Cassandra), one sink
 * created once over REST: devices publish to every node, one node is killed with -9 while
 * exporting, and once its lease runs out another node adopts its feed log. Downstream nothing
 * acknowledged is missing, and each device's messages — also those of devices that moved to another
 * node — are in order after dropping repeats by {@code seq}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExportClusterIT {

  private static final Logger LOG = LoggerFactory.getLogger(ExportClusterIT.class);
  private static final Duration LEASE = Duration.ofSeconds(6);

  private LocalCluster cluster;
  private WebhookReceiver receiver;
  private final List<NodeProcess> up = new CopyOnWriteArrayList<>();

  @BeforeAll
  void start() throws Exception {
    Path work = Files.createDirectories(Path.of("target", "export-cluster-it").toAbsolutePath());
    cluster =
        new LocalCluster(
            SharedCassandra.get(),
            work,
            Map.of(
                "FIELDLINE_EXPORT_LEASE", LEASE.toSeconds() + "s",
                "FIELDLINE_EXPORT_REFRESH_INTERVAL", "1s",
                "FIELDLINE_EXPORT_RETRY_MAX", "1s"));
    up.addAll(cluster.start("n1", "n2", "n3"));
    await("rings of 3")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                up.stream()
                    .allMatch(node -> cluster.metric(node, "fieldline_cluster_ring_nodes") == 3));
    receiver = WebhookReceiver.start();
  }

  @AfterAll
  void stop() throws Exception {
    if (receiver != null) {
      receiver.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void should_deliver_the_dead_nodes_log_from_another_node_when_a_node_is_killed_while_exporting() {
    NodeProcess n1 = up.get(0);
    NodeProcess n3 = up.get(2);
    assertThat(
            cluster
                .post(n1, "/api/fieldline/sinks", receiver.sinkJson("cluster-hook"))
                .statusCode())
        .isEqualTo(200);
    long base = 1_750_400_000_000L;
    try (DeviceFleet fleet = new DeviceFleet(this::upPorts, Duration.ofMillis(50))) {
      for (int d = 0; d < 30; d++) {
        DeviceId id = cluster.createDevice(n1, "cluster-" + d, "cluster-token-" + d);
        fleet.add(id, "cluster-token-" + d, base, up.get(d % 3).mqttPort());
      }
      fleet.start();
      // Exporting is under way before the kill.
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                assertThat(fleet.ackedCount()).as("acknowledged").isGreaterThanOrEqualTo(600);
                assertThat(receiver.received())
                    .as(() -> "records received; " + exportState(n1))
                    .isGreaterThanOrEqualTo(300);
              });
      Map<UUID, UUID> n3Logs = logsOf("n3");
      assertThat(n3Logs).as("n3 writes a feed log").isNotEmpty();
      // A backlog in every log, n3's included: acknowledged, stored, not delivered.
      receiver.refuse(true);
      long ackedAtRefusal = fleet.ackedCount();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> fleet.ackedCount() >= ackedAtRefusal + 300);

      n3.kill();
      up.remove(n3);
      long killedAt = System.nanoTime();
      Map<DeviceId, Set<Long>> ackedAtKill = fleet.ackedSnapshot();
      assertThat(receiver.hasAll(ackedAtKill)).as("a backlog at the kill").isFalse();
      receiver.refuse(false);

      await("n3's log adopted and everything acknowledged before the kill delivered")
          .atMost(LEASE.plusSeconds(30))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> adopted(n3Logs) && receiver.hasAll(ackedAtKill));
      long deliveredAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);

      long ackedAfter = fleet.ackedCount();
      await().atMost(Duration.ofSeconds(30)).until(() -> fleet.ackedCount() >= ackedAfter + 300);
      fleet.stop();
      await().atMost(Duration.ofSeconds(60)).until(fleet::drained);
      await("everything acknowledged, delivered")
          .atMost(Duration.ofSeconds(30))
          .until(() -> receiver.hasAll(fleet.ackedSnapshot()));

      assertThat(receiver.badSignatures()).isZero();
      assertThat(fleet.reconnects()).as("devices of n3 moved to the others").isPositive();
      int repeats = receiver.assertConsumerView(fleet.devices());
      LOG.info(
          "backlog of the kill delivered {} ms after it (lease {}); {} records, {} repeats"
              + " dropped by seq, {} messages sent again",
          deliveredAfterMillis,
          LEASE,
          receiver.received(),
          repeats,
          fleet.devices().stream().mapToInt(device -> device.retransmitted().size()).sum());
    }
  }

  /** The sink as REST shows it, the cursors and the logs: what a stalled export looks like. */
  private String exportState(NodeProcess via) {
    return "sink: "
        + cluster.get(via, "/api/fieldline/sinks").body()
        + "; cursors: "
        + cluster
            .cql()
            .execute("SELECT log, pos, watermark, updated_at FROM feed_cursors")
            .all()
            .stream()
            .map(Row::getFormattedContents)
            .toList()
        + "; logs: "
        + cluster.cql().execute("SELECT log, node, last_pos, owner FROM feed_logs").all().stream()
            .map(Row::getFormattedContents)
            .toList();
  }

  private List<Integer> upPorts() {
    List<Integer> ports = new ArrayList<>();
    for (NodeProcess node : up) {
      ports.add(node.mqttPort());
    }
    return ports;
  }

  /** Whether each of {@code logs} is retired or held by another process than the one it was. */
  private boolean adopted(Map<UUID, UUID> logs) {
    Map<UUID, UUID> now = logsOf("n3");
    return logs.entrySet().stream()
        .allMatch(
            log ->
                !now.containsKey(log.getKey())
                    || !Objects.equals(now.get(log.getKey()), log.getValue()));
  }

  /** The node's feed logs not retired, each with the process that holds it now (or null). */
  private Map<UUID, UUID> logsOf(String node) {
    Map<UUID, UUID> logs = new HashMap<>();
    for (Row row :
        cluster.cql().execute("SELECT log, node, owner, retired FROM feed_logs WHERE bucket = 0")) {
      if (node.equals(row.getString("node")) && !row.getBoolean("retired")) {
        logs.put(row.getUuid("log"), row.getUuid("owner"));
      }
    }
    return logs;
  }
}
