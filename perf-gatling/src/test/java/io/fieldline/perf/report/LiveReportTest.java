package io.fieldline.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A LiveUpdates run directory with made-up numbers: the single node meets the target, the cluster
 * misses it (its updates' p99 is 70 ms after their PUBACK, 80 ms over the PUBACK p99, and 4 were
 * lost); the warm window is seconds 2..4 from the first connection.
 */
class LiveReportTest {

  private static final long START = 1_700_000_000_000L;

  @TempDir Path run;

  @BeforeEach
  void writeRun() throws IOException {
    Files.writeString(
        run.resolve("bench.properties"),
        """
        scenario=LiveUpdates
        describe=1000 devices × 1 msg/s, 100 live subscriptions
        command=bench/run.sh LiveUpdates
        date=2026-11-24 21:00 UTC
        machine=2 cores
        clkTck=100
        clusterNodes=2
        runDir=bench/results/x
        """);
    Files.writeString(run.resolve("fieldline-summary.json"), summary(12, 20, 0));
    Files.writeString(run.resolve("cluster-summary.json"), summary(70, 90, 4));
    StringBuilder cpu = new StringBuilder();
    for (int s = 0; s <= 6; s++) {
      long at = START + s * 1000L;
      cpu.append(at).append(" server 1 ").append(s * 40).append(" 512\n");
      cpu.append(at).append(" cassandra 2 ").append(s * 30).append(" 1024\n");
      cpu.append(at).append(" generator 3 ").append(s * 10).append(" 256\n");
    }
    Files.writeString(run.resolve("cpu-fieldline.txt"), cpu.toString());
  }

  private static String summary(int afterAckP99, int updateP99, int lost) {
    return """
    {"startEpochMillis": %d, "connects": 1000, "failures": {"timeout": 0, "closed": 0},
     "offeredPerSecond": 1000.0, "steadyAckedPerSecond": 999.5,
     "live": {"subscriptions": 100, "wsSessions": 10},
     "windows": {
       "cold": {"seconds": [0, 2], "ackLatencyMillis": {"count": 2000, "p50": 1.5, "p90": 9.0,
         "p95": 12.0, "p99": 40.0, "p999": 90.0, "max": 120.0}},
       "warm": {"seconds": [2, 4], "ackLatencyMillis": {"count": 2000, "p50": 1.0, "p90": 2.0,
         "p95": 3.0, "p99": 10.0, "p999": 15.0, "max": 20.0}}},
     "liveUpdates": {"subscriptionsStarted": 100, "errors": 0, "lost": %d, "expected": 400,
       "lostBySubscription": %s,
       "receivedExpected": %d,
       "firstUpdateMillis": {"count": 100, "p50": 35, "max": 410},
       "windows": {
         "cold": {"seconds": [0, 2], "expected": 200, "receivedExpected": 200, "lost": 0,
           "beforeAck": 3,
           "updateLatencyMillis": {"count": 200, "p50": 4, "p90": 30, "p99": 200, "p999": 300, "max": 310},
           "afterAckMillis": {"count": 200, "p50": 1, "p90": 5, "p99": 150, "p999": 160, "max": 170}},
         "warm": {"seconds": [2, 4], "expected": 200, "receivedExpected": %d, "lost": %d,
           "beforeAck": 7,
           "updateLatencyMillis": {"count": 200, "p50": 3, "p90": 5, "p99": %d, "p999": 95, "max": 99},
           "afterAckMillis": {"count": 200, "p50": 1, "p90": 2, "p99": %d, "p999": 80, "max": 85}}}}}
    """
        .formatted(
            START,
            lost,
            lost == 0
                ? "{}"
                : "{\"7\": {\"lost\": 3, \"firstLostMillis\": 1200, \"lastLostMillis\": 3100},"
                    + " \"9\": {\"lost\": 1, \"firstLostMillis\": 2500, \"lastLostMillis\": 2500}}",
            400 - lost,
            200 - lost,
            lost,
            updateP99,
            afterAckP99);
  }

  @Test
  void should_say_by_how_much_the_target_is_missed_and_what_was_lost() throws IOException {
    String md = new LiveReport(run).render();

    assertThat(md).contains("| Fieldline, 1 node | 2-node cluster, devices on node 2");
    assertThat(md)
        .contains(
            "| target: warm p99 ≤ 50 ms on top of the PUBACK, 0 lost over the whole run | met"
                + " (PUBACK → update p99 12.0 ms; update p99 − PUBACK p99 10.0 ms) | missed:"
                + " PUBACK → update p99 20.0 ms over, update p99 − PUBACK p99 30.0 ms over, 4 lost"
                + " (PUBACK → update p99 70.0 ms; update p99 − PUBACK p99 80.0 ms) |");
    assertThat(md)
        .contains("| updates expected / received / lost, warm | 200 / 200 / 0 | 200 / 196 / 4 |");
    assertThat(md)
        .contains(
            "| subscriptions that lost updates; when (lost messages' ts, s from start) | 0 | 2 of"
                + " 100; 1.2–3.1 s |");
  }

  @Test
  void should_put_the_puback_latency_of_the_same_window_beside_the_update_latency()
      throws IOException {
    String md = new LiveReport(run).render();

    assertThat(md)
        .contains(
            "| publish → update p50 / p90 / p99 / p99.9 / max ms, warm | 3.0 / 5.0 / 20.0 / 95.0 /"
                + " 99.0 |");
    assertThat(md)
        .contains(
            "| PUBACK p50 / p90 / p99 / p99.9 / max ms (all devices), warm | 1.0 / 2.0 / 10.0 /"
                + " 15.0 / 20.0 |");
    assertThat(md)
        .contains("| updates ahead of their own PUBACK (counted as 0), cold / warm | 3 / 7 |");
    assertThat(md).contains("| subscribe → first update p50 / max ms | 35 / 410 |");
    // 40 ticks/s of server, 30 of Cassandra, 10 of the generator at 100 ticks per second.
    assertThat(md)
        .contains(
            "| CPU cores, warm: server(s) / Cassandra / generator / machine | 0.40 / 0.30 / 0.10 /"
                + " - |");
  }
}
