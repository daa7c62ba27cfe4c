package io.fieldline.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A RpcRoundTrip run directory with made-up numbers: the single node meets the target, the cluster
 * misses it by 10 ms of p99 and 3 lost calls; the first call comes 5 s after the first connection,
 * the warm window is seconds 2..4 of the calls, so the downlink rate is read at seconds 7..9.
 */
class RpcReportTest {

  private static final long START = 1_700_000_000_000L;
  private static final long FIRST_CALL = START + 5_000;

  @TempDir Path run;

  @BeforeEach
  void writeRun() throws IOException {
    Files.writeString(
        run.resolve("bench.properties"),
        """
        scenario=RpcRoundTrip
        describe=1000 devices answering RPC
        command=bench/run.sh RpcRoundTrip
        date=2026-11-24 18:00 UTC
        machine=2 cores
        clkTck=100
        clusterNodes=2
        """);
    Files.writeString(run.resolve("fieldline-summary.json"), summary(30.0, "{\"200\":1000}", 0));
    Files.writeString(
        run.resolve("cluster-summary.json"), summary(60.0, "{\"0\":1,\"200\":999,\"504\":1}", 1));
    StringBuilder cpu = new StringBuilder();
    for (int s = 0; s <= 12; s++) {
      long at = START + s * 1000L;
      cpu.append(at).append(" server 1 ").append(s * 50).append(" 1024\n");
      cpu.append(at).append(" cassandra 2 ").append(s * 20).append(" 1024\n");
    }
    Files.writeString(run.resolve("cpu-fieldline.txt"), cpu.toString());
  }

  private static String summary(double warmP99, String statuses, int wrongEcho) {
    long lost = statuses.contains("504") ? 2 + wrongEcho : 0;
    return """
    {"startEpochMillis": %d, "connects": 1000, "failures": {"timeout": 0},
     "rpcResponder": {"requested": 1000, "answered": 1000},
     "rpcRequestedPerSecond": [0,0,0,0,0,100,100,250,250,100,0],
     "rpcCalls": {"firstCallEpochMillis": %d, "calls": 1000, "answered": %d, "lost": %d,
       "wrongEcho": %d, "statuses": %s,
       "roundTripMillis": {"count": 1000, "p50": 2.0, "p95": 5.0, "p99": 40.0, "p999": 80.0, "max": 90.0},
       "windows": {
         "cold": {"seconds": [0, 2], "answeredPerSecond": 100.0,
           "roundTripMillis": {"count": 200, "p50": 3.0, "p95": 9.0, "p99": 70.0, "p999": 80.0, "max": 90.0}},
         "warm": {"seconds": [2, 4], "answeredPerSecond": 250.0,
           "roundTripMillis": {"count": 500, "p50": 2.0, "p95": 4.0, "p99": %s, "p999": 31.0, "max": 62.0}}}}}
    """
        .formatted(START, FIRST_CALL, 1000 - lost, lost, wrongEcho, statuses, warmP99);
  }

  @Test
  void should_say_by_how_much_the_target_is_missed_and_what_was_lost() throws IOException {
    String md = new RpcReport(run).render();

    assertThat(md).contains("| Fieldline, 1 node | 2-node cluster, devices on node 2");
    assertThat(md)
        .contains(
            "| target: warm p99 ≤ 50 ms, 0 lost over the whole run | met | missed: p99 10.0 ms"
                + " over, 3 lost |");
    assertThat(md)
        .contains(
            "| lost (by HTTP status; 0 = no answer) | 0 | 3 (0: 1, 504: 1, 200 with a wrong echo:"
                + " 1) |");
    assertThat(md)
        .contains(
            "| round trip p50 / p95 / p99 / p99.9 / max ms, warm | 2.0 / 4.0 / 30.0 / 31.0 / 62.0"
                + " |");
  }

  @Test
  void should_read_the_downlink_rate_and_cpu_over_the_warm_seconds_of_the_calls()
      throws IOException {
    String md = new RpcReport(run).render();

    // Seconds 7 and 8 after the first connection: (250 + 250) / 2.
    assertThat(md)
        .contains(
            "| downlink: requests delivered to devices / s, warm | 250.0 (total: 1000 received,"
                + " 1000 answered) |");
    // 50 ticks/s of server and 20 of Cassandra at 100 ticks per second; no generator samples.
    assertThat(md)
        .contains(
            "| CPU cores, warm: server(s) / Cassandra / generator / machine | 0.50 / 0.20 / - / -"
                + " |");
  }
}
