package io.fieldline.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run directory as bench/run.sh leaves it, with made-up numbers chosen so that every derived
 * figure of the cluster comparison can be checked by hand: 1,000 messages in a 10 s window in each
 * phase, the single node using 0.5 + 0.5 CPU seconds, the cluster 0.4 + 0.4 (nodes) + 0.6
 * (Cassandra), half of the cluster's messages forwarded.
 */
class BenchReportTest {

  private static final long START = 1_700_000_000_000L;

  @TempDir Path run;

  @BeforeEach
  void writeRun() throws IOException {
    Files.writeString(
        run.resolve("bench.properties"),
        """
        scenario=DevicesAtRate
        describe=100 devices × 1 msg/s
        command=bench/run.sh DevicesAtRate
        date=2026-11-23 14:00 UTC
        machine=2 cores
        keys=4
        clkTck=100
        clusterNodes=2
        """);
    Files.writeString(run.resolve("fieldline-summary.json"), summary(2.0, 10.0, 20.0));
    Files.writeString(run.resolve("cluster-summary.json"), summary(3.0, 12.5, 30.0));
    Files.writeString(
        run.resolve("cpu-fieldline.txt"),
        cpu("server", 0, 50) + cpu("cassandra", 0, 50) + cpu("generator", 0, 10));
    Files.writeString(
        run.resolve("cpu-cluster.txt"),
        cpu("node-1", 100, 140)
            + cpu("node-2", 0, 40)
            + cpu("cassandra", 0, 60)
            + cpu("zookeeper", 0, 1)
            + cpu("generator", 0, 10));
    Path scrapes = Files.createDirectories(run.resolve("cluster-metrics"));
    for (String node : new String[] {"node-1", "node-2"}) {
      Files.writeString(scrapes.resolve(node + "-" + (START - 1_000) + ".txt"), metrics(10, 20));
      Files.writeString(scrapes.resolve(node + "-" + (START + 11_000) + ".txt"), metrics(260, 520));
      Files.writeString(run.resolve("cluster-metrics-before-" + node + ".txt"), metrics(0, 0));
      Files.writeString(run.resolve("cluster-metrics-" + node + ".txt"), metrics(300, 600));
    }
  }

  @Test
  void should_charge_the_cluster_extra_cpu_to_the_forwarded_messages() throws IOException {
    String markdown = new BenchReport(run).render();

    assertThat(markdown)
        .contains("#### Single node and 2-node cluster: the cost of forwarding")
        .contains("| msgs/s achieved (steady window) | 100 | 100 |")
        .contains("| CPU µs per persisted message: Fieldline + Cassandra | 1,000 | 1,400 | +400 |")
        .contains("| … of which Fieldline / Cassandra | 500 / 500 | 800 / 600 | +300 / +100 |")
        .contains("| CPU cores: Fieldline (server; sum of the nodes) | 0.05 | 0.08 (0.04 + 0.04)")
        .contains("600 (60.0 %)")
        .contains("500 (50.0 %)")
        .contains(
            "- CPU per forwarded message: +800 µs (Fieldline nodes +600 µs, Cassandra +200 µs)")
        .contains("÷ 0.500 forwarded share")
        .contains("- PUBACK, steady window: p50 +1.0 ms, p99 +2.5 ms, p99.9 +10.0 ms");
  }

  @Test
  void should_leave_the_comparison_out_when_there_was_no_cluster_phase() throws IOException {
    Files.delete(run.resolve("cluster-summary.json"));

    assertThat(new BenchReport(run).render()).doesNotContain("cost of forwarding");
  }

  @Test
  void should_compare_fieldline_with_hivemq_and_say_it_stores_nothing() throws IOException {
    Files.writeString(run.resolve("hivemq-summary.json"), summary(0.5, 2.0, 4.0));
    Files.writeString(run.resolve("cpu-hivemq.txt"), cpu("hivemq", 0, 20) + cpu("generator", 0, 8));

    String markdown = new BenchReport(run).render();

    assertThat(markdown)
        .contains("| HiveMQ CE  (no storage) |")
        .contains("| msgs/s achieved (steady window) | 100 | - | 100 | - |")
        .contains("| acked / stored / missing (partial) | not checked | - | nothing stored" + " |")
        .contains("| CPU cores: broker / server | 0.05 | - | 0.02 |")
        .contains("| 1,000 per message | - | 200 per message (broker only) |")
        .contains(
            "- Fieldline ÷ HiveMQ CE, msgs/s: 1.00; PUBACK p99 (steady): 5.00; CPU µs per message"
                + " (server + Cassandra ÷ broker): 5.00")
        .doesNotContain("Fieldline ÷ Mosquitto");
  }

  @Test
  void should_leave_the_hivemq_column_empty_when_it_did_not_run() throws IOException {
    assertThat(new BenchReport(run).render())
        .contains("| acked / stored / missing (partial) | not checked | - | - | - |")
        .doesNotContain("Fieldline ÷ HiveMQ CE");
  }

  @Test
  void should_report_the_cold_window_apart_from_the_warm_one_connects_included()
      throws IOException {
    Files.writeString(
        run.resolve("bench.properties"),
        Files.readString(run.resolve("bench.properties"))
                .replace("scenario=DevicesAtRate", "scenario=ColdStart")
            + "readyEpochMillis="
            + (START - 2_500)
            + "\n");
    // 20 s run: seconds 0-9 cold (50 msgs/s, 100 connects in second 0), 10-19 warm (100 msgs/s)
    Files.writeString(
        run.resolve("fieldline-summary.json"),
        """
        {"startEpochMillis": %d, "steadyWindowSeconds": [10, 20], "offeredPerSecond": 100,
         "sent": 1500, "acked": 1500, "failures": {},
         "ackedPerSecond": [50, 50, 50, 50, 50, 50, 50, 50, 50, 50,
                            100, 100, 100, 100, 100, 100, 100, 100, 100, 100],
         "connectedPerSecond": [100],
         "steadyAckLatencyMillis": {"count": 1000, "p50": 1, "p95": 2, "p99": 3, "p999": 4, "max": 5},
         "windows": {
           "cold": {"seconds": [0, 10], "ackLatencyMillis":
             {"count": 500, "p50": 20, "p95": 300, "p99": 900, "p999": 1000, "max": 1200}},
           "warm": {"seconds": [10, 20], "ackLatencyMillis":
             {"count": 1000, "p50": 1, "p95": 2, "p99": 3, "p999": 4, "max": 5}}}}
        """
            .formatted(START));
    // server: 1.0 CPU s in the cold window, 0.5 in the warm one; Cassandra 0.5 in each
    Files.writeString(
        run.resolve("cpu-fieldline.txt"),
        samples("server", 0, 100, 150) + samples("cassandra", 0, 50, 100));

    String markdown = new BenchReport(run).render();

    assertThat(markdown)
        .contains("- /health/ready → first connection attempt: 2.5 s")
        .contains("| | cold: seconds 0–10 | warm: seconds 10–20 |")
        .contains("| msgs/s achieved ÷ offered | 50 ÷ 100 = 0.500 | 100 ÷ 100 = 1.000 |")
        .contains("| connects (CONNACKs) in the window | 100 | 0 |")
        .contains(
            "| PUBACK p50 / p95 / p99 / p99.9 / max ms | 20.0 / 300.0 / 900.0 / 1,000.0 / 1,200 |"
                + " 1.0 / 2.0 / 3.0 / 4.0 / 5 |")
        .contains("| CPU cores: server / Cassandra | 0.10 / 0.05 | 0.05 / 0.05 |")
        .contains("| CPU µs per message, server + Cassandra (connects included) | 3,000 | 1,000 |");
  }

  @Test
  void should_report_points_and_cpu_per_point_when_each_message_carries_many_children()
      throws IOException {
    Files.delete(run.resolve("cluster-summary.json"));
    Files.writeString(
        run.resolve("bench.properties"),
        Files.readString(run.resolve("bench.properties"))
            .replace("scenario=DevicesAtRate", "scenario=GatewayFleet"));
    // 20 s: 5 gateway messages/s in the cold window (seconds 0-9), 10/s in the warm one, 100
    // points each.
    Files.writeString(
        run.resolve("fieldline-summary.json"),
        """
        {"startEpochMillis": %d, "steadyWindowSeconds": [10, 20], "offeredPerSecond": 10,
         "pointsPerMessage": 100, "sent": 150, "acked": 150, "failures": {},
         "ackedPerSecond": [5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
                            10, 10, 10, 10, 10, 10, 10, 10, 10, 10],
         "steadyAckLatencyMillis": {"count": 100, "p50": 4, "p95": 5, "p99": 6, "p999": 7, "max": 8},
         "windows": {
           "cold": {"seconds": [0, 10], "ackLatencyMillis":
             {"count": 50, "p50": 40, "p95": 900, "p99": 2000, "p999": 2500, "max": 2600}},
           "warm": {"seconds": [10, 20], "ackLatencyMillis":
             {"count": 100, "p50": 4, "p95": 5, "p99": 6, "p999": 7, "max": 8}},
           "run": {"seconds": [0, 20], "ackLatencyMillis":
             {"count": 150, "p50": 5, "p95": 800, "p99": 1900, "p999": 2500, "max": 2600}}}}
        """
            .formatted(START));
    // server: 1.0 CPU s cold, 0.5 warm; Cassandra 0.5 in each
    Files.writeString(
        run.resolve("cpu-fieldline.txt"),
        samples("server", 0, 100, 150) + samples("cassandra", 0, 50, 100));
    Files.writeString(
        run.resolve("fieldline-check.json"),
        """
        {"unit": "points", "acked": 15000, "storedAcked": 15000, "missing": 0, "partial": 0,
         "storedNotAcked": 0, "childrenExpected": 500, "childrenFound": 500, "messagesAcked": 150}
        """);

    String markdown = new BenchReport(run).render();

    assertThat(markdown)
        .contains("Points (100 points per message, one per child, 4 values each)")
        .contains(
            "| | cold: seconds 0–10 | warm (steady): seconds 10–20 | whole run: seconds 0–20 |")
        .contains(
            "| messages/s acknowledged ÷ offered | 5 ÷ 10 = 0.500 | 10 ÷ 10 = 1.000 |"
                + " 8 ÷ 10 = 0.750 |")
        .contains(
            "| **persisted points/s** (acknowledged messages × points per message) | 500 |"
                + " 1,000 | 750 |")
        .contains("| values (ts_kv rows)/s | 2,000 | 4,000 | 3,000 |")
        .contains("| PUBACK p50 / p99 / max ms | 40.0 / 2,000.0 / 2,600 | 4.0 / 6.0 / 8 |")
        .contains("| **CPU µs per persisted point** (server + Cassandra) | 300.0 | 100.0 | 166.7 |")
        .contains("| **points/s per core used** (server + Cassandra) | 3,333 | 10,000 | 6,000 |")
        .contains("| CPU µs per point: server alone | 200.0 | 50.0 | 100.0 |")
        .contains("| acked / stored / missing (partial) | points: 15000 / 15000 / 0 (0);")
        .contains(
            "Children found over REST (`GET /api/tenant/devices?deviceName=`): 500 of 500;"
                + " acknowledged gateway messages 150 = 15000 points, of which stored 15000,"
                + " missing 0, partly stored 0.");
  }

  @Test
  void should_leave_the_points_table_out_when_the_summary_gives_no_points_per_message()
      throws IOException {
    assertThat(new BenchReport(run).render()).doesNotContain("persisted points/s");
  }

  @Test
  void should_report_recovery_and_refusals_of_a_reconnect_storm() throws IOException {
    Files.delete(run.resolve("cluster-summary.json"));
    Files.writeString(
        run.resolve("fieldline-summary.json"),
        summary(2.0, 10.0, 20.0)
            .replace(
                "\"offeredPerSecond\": 100,",
                """
                "offeredPerSecond": 100, "storm": "reconnect", "devices": 100, "drops": 100,
                "connackRefusals": {"0x05": 2},
                "resumeAfterDropMillis": {"count": 99, "p50": 40, "p95": 300, "p99": 800,
                  "max": 1250.5},
                """));
    Files.writeString(
        run.resolve("fieldline-check.json"),
        """
        {"acked": 1000, "storedAcked": 1000, "missing": 0, "partial": 0, "storedNotAcked": 0}
        """);

    String markdown = new BenchReport(run).render();

    assertThat(markdown)
        .contains("Reconnect storm: every socket closed at once without DISCONNECT")
        .contains("| connections dropped | 100 | - | - |")
        .contains("| devices publishing again (first PUBACK after the drop) / devices | 99 / 100 |")
        .contains(
            "time until every device publishes again (max of drop → first PUBACK), ms | 1,251 |")
        .contains("| drop → first PUBACK p50 / p95 / p99 ms | 40 / 300 / 800 |")
        .contains("| CONNACK refusals by return code | 0x03: 0, 0x05: 2 | - | - |")
        .contains("| acked / stored / missing (partial), whole run | 1000 / 1000 / 0 (0);");
  }

  @Test
  void should_say_tls_and_report_handshakes_and_server_cpu_when_the_run_was_over_tls()
      throws IOException {
    Files.delete(run.resolve("cluster-summary.json"));
    Files.writeString(
        run.resolve("bench.properties"),
        Files.readString(run.resolve("bench.properties"))
            + "tls=EC P-256 server certificate from a CA made for the run\n");
    Files.writeString(
        run.resolve("fieldline-summary.json"),
        summary(2.0, 10.0, 20.0)
            .replace(
                "\"offeredPerSecond\": 100,",
                """
                "offeredPerSecond": 100, "tls": true,
                "tlsHandshakeLatencyMillis": {"count": 100, "p50": 3, "p95": 6, "p99": 9,
                  "p999": 12, "max": 15},
                "tlsSessions": {"TLSv1.3 TLS_AES_256_GCM_SHA384": 100},
                """));

    String markdown = new BenchReport(run).render();

    assertThat(markdown)
        .contains(
            "- TLS: EC P-256 server certificate from a CA made for the run; negotiated:"
                + " Fieldline TLSv1.3 TLS_AES_256_GCM_SHA384 × 100\n")
        .contains("| | Fieldline over TLS (PUBACK after the Cassandra write) |")
        .contains(
            "| TLS handshakes; TCP connected → handshake done p50 / p95 / p99 / p99.9 / max ms"
                + " | 100; 3.0 / 6.0 / 9.0 / 12.0 / 15 | - | - | - |")
        .contains(
            "| CPU µs per message: the broker / server process alone (Fieldline without"
                + " Cassandra) | 500 | - | - | - |");
  }

  @Test
  void should_not_mention_tls_when_the_run_was_in_clear_text() throws IOException {
    assertThat(new BenchReport(run).render())
        .doesNotContain("TLS")
        .contains("| | Fieldline (PUBACK after the Cassandra write) |");
  }

  /** Three samples of one process: at the start, after 10 s and after 20 s. */
  private static String samples(String label, long at0, long at10, long at20) {
    return START
        + " "
        + label
        + " 1 "
        + at0
        + " 1024\n"
        + (START + 10_000)
        + " "
        + label
        + " 1 "
        + at10
        + " 1024\n"
        + (START + 20_000)
        + " "
        + label
        + " 1 "
        + at20
        + " 1024\n";
  }

  private static String summary(double p50, double p99, double p999) {
    return """
    {"startEpochMillis": %d, "steadyWindowSeconds": [0, 10], "offeredPerSecond": 100,
     "sent": 1000, "acked": 1000, "failures": {},
     "ackedPerSecond": [100, 100, 100, 100, 100, 100, 100, 100, 100, 100],
     "steadyAckLatencyMillis": {"count": 1000, "p50": %s, "p95": 5, "p99": %s, "p999": %s,
       "max": 40}}
    """
        .formatted(START, p50, p99, p999);
  }

  /** Two samples of one process bracketing the window: ticks at its start and at its end. */
  private static String cpu(String label, long fromTicks, long toTicks) {
    return START
        + " "
        + label
        + " 1 "
        + fromTicks
        + " 1024\n"
        + (START + 10_000)
        + " "
        + label
        + " 1 "
        + toTicks
        + " 1024\n";
  }

  private static String metrics(long forwarded, long written) {
    return "fieldline_cluster_forwarded_total "
        + forwarded
        + "\n"
        + "fieldline_store_request_writes_count "
        + written
        + "\n"
        + "fieldline_store_request_writes_sum "
        + written
        + "\n";
  }
}
