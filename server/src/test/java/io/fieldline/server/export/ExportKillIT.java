package io.fieldline.server.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.DeviceId;
import io.fieldline.server.cluster.DeviceFleet;
import io.fieldline.server.cluster.LocalCluster;
import io.fieldline.server.cluster.NodeProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single server (its own process, no ZooKeeper) killed with -9 while devices publish QoS 1 and it
 * exports to a webhook that refuses the last seconds before it: restarted on the same keyspace, it
 * delivers everything acknowledged before the kill, within seconds — it takes its previous run's
 * feed log at once, not after the lease — and a consumer that drops repeats by {@code seq} sees
 * each device's messages in order.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExportKillIT {

  private static final Logger LOG = LoggerFactory.getLogger(ExportKillIT.class);

  /** What a restart may take to deliver the backlog; the lease below is far longer. */
  private static final Duration AT_ONCE = Duration.ofSeconds(10);

  private LocalCluster nodes;
  private WebhookReceiver receiver;
  private volatile int mqttPort;

  @BeforeAll
  void start() throws Exception {
    Path work = Files.createDirectories(Path.of("target", "export-kill-it").toAbsolutePath());
    nodes =
        LocalCluster.standalone(
            SharedCassandra.get(),
            work,
            Map.of(
                // Were the previous log adopted only when its lease ran out, the test would fail.
                "FIELDLINE_EXPORT_LEASE", "300s",
                "FIELDLINE_EXPORT_RETRY_MAX", "1s"));
    receiver = WebhookReceiver.start();
  }

  @AfterAll
  void stop() throws Exception {
    if (receiver != null) {
      receiver.close();
    }
    if (nodes != null) {
      nodes.close();
    }
  }

  @Test
  void should_deliver_everything_acknowledged_before_a_kill_9_when_the_single_node_restarts() {
    NodeProcess node = nodes.start("solo").get(0);
    mqttPort = node.mqttPort();
    assertThat(
            nodes.post(node, "/api/fieldline/sinks", receiver.sinkJson("kill-hook")).statusCode())
        .isEqualTo(200);
    long base = 1_750_300_000_000L;
    // While the node is down, devices keep trying the last port it had.
    try (DeviceFleet fleet = new DeviceFleet(() -> List.of(mqttPort), Duration.ofMillis(20))) {
      for (int d = 0; d < 10; d++) {
        DeviceId id = nodes.createDevice(node, "kill-" + d, "kill-token-" + d);
        fleet.add(id, "kill-token-" + d, base, mqttPort);
      }
      fleet.start();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> fleet.ackedCount() >= 500 && receiver.received() >= 200);

      // A backlog only the previous run's log holds: acknowledged, stored, not delivered.
      receiver.refuse(true);
      long ackedAtRefusal = fleet.ackedCount();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> fleet.ackedCount() >= ackedAtRefusal + 300);

      node.kill();
      Map<DeviceId, Set<Long>> ackedAtKill = fleet.ackedSnapshot();
      assertThat(receiver.hasAll(ackedAtKill)).as("a backlog at the kill").isFalse();
      receiver.refuse(false);
      long restartStart = System.nanoTime();
      NodeProcess restarted = nodes.start("solo").get(0);
      long restartMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartStart);
      mqttPort = restarted.mqttPort();

      long readyAt = System.nanoTime();
      await("everything acknowledged before the kill, delivered after the restart")
          .atMost(AT_ONCE)
          .pollInterval(Duration.ofMillis(100))
          .until(() -> receiver.hasAll(ackedAtKill));
      long backlogMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - readyAt);

      long ackedAfterRestart = fleet.ackedCount();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> fleet.ackedCount() >= ackedAfterRestart + 300);
      fleet.stop();
      await().atMost(Duration.ofSeconds(30)).until(fleet::drained);
      await("everything acknowledged, delivered")
          .atMost(Duration.ofSeconds(20))
          .until(() -> receiver.hasAll(fleet.ackedSnapshot()));

      assertThat(receiver.badSignatures()).isZero();
      int repeats = receiver.assertConsumerView(fleet.devices());
      LOG.info(
          "restart took {} ms; backlog delivered {} ms after; {} records, {} repeats dropped by"
              + " seq, {} messages sent again",
          restartMillis,
          backlogMillis,
          receiver.received(),
          repeats,
          fleet.devices().stream().mapToInt(device -> device.retransmitted().size()).sum());
    }
  }
}
