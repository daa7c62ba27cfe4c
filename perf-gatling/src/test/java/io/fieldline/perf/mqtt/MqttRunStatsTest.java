package io.fieldline.perf.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MqttRunStatsTest {

  @Test
  void should_put_latencies_in_the_documented_buckets_when_bounds_are_hit() {
    assertThat(MqttRunStats.bucketOf(9_999)).isZero();
    assertThat(MqttRunStats.bucketOf(10_000)).isEqualTo(1);
    assertThat(MqttRunStats.bucketOf(49_999)).isEqualTo(1);
    assertThat(MqttRunStats.bucketOf(50_000)).isEqualTo(2);
    assertThat(MqttRunStats.bucketOf(999_999)).isEqualTo(5);
    assertThat(MqttRunStats.bucketOf(1_000_000)).isEqualTo(6);
    assertThat(MqttRunStats.BUCKET_LABELS).hasSize(7);
  }

  @Test
  void should_write_counts_percentiles_and_buckets_when_summarised(@TempDir Path dir)
      throws Exception {
    MqttRunStats stats = new MqttRunStats();
    stats.steadyWindow(0, 1);
    stats.connecting();
    stats.connected(2_000_000);
    for (int i = 0; i < 99; i++) {
      stats.sent();
      stats.acked(3_000_000); // 3 ms
    }
    stats.sent();
    stats.acked(1_500_000_000L); // 1.5 s
    stats.failed(MqttRunStats.Failure.TIMEOUT);

    Path file = dir.resolve("summary.json");
    stats.writeSummary(file, Map.of("simulation", "test"));
    JsonNode json = new ObjectMapper().readTree(file.toFile());

    assertThat(json.path("simulation").asText()).isEqualTo("test");
    assertThat(json.path("sent").asLong()).isEqualTo(100);
    assertThat(json.path("acked").asLong()).isEqualTo(100);
    assertThat(json.path("failures").path("timeout").asLong()).isEqualTo(1);
    assertThat(json.path("ackLatencyBuckets").path("< 10 ms").asLong()).isEqualTo(99);
    assertThat(json.path("ackLatencyBuckets").path("> 1 s").asLong()).isEqualTo(1);
    assertThat(json.path("ackLatencyMillis").path("p50").asDouble()).isBetween(2.99, 3.01);
    assertThat(json.path("ackLatencyMillis").path("max").asDouble()).isBetween(1499.0, 1501.0);
    assertThat(stats.meanAckedPerSecond(0, 1)).isEqualTo(100.0);
    assertThat(json.path("steadyAckLatencyMillis").path("count").asLong()).isEqualTo(100);
    assertThat(json.path("steadyAckLatencyBuckets").path("> 1 s").asLong()).isEqualTo(1);
  }

  @Test
  void should_leave_acks_out_of_the_steady_figures_when_outside_the_window(@TempDir Path dir)
      throws Exception {
    MqttRunStats stats = new MqttRunStats();
    stats.steadyWindow(5, 10);
    stats.connecting();
    stats.acked(3_000_000);

    Path file = dir.resolve("summary.json");
    stats.writeSummary(file, Map.of());
    JsonNode json = new ObjectMapper().readTree(file.toFile());

    assertThat(json.path("acked").asLong()).isEqualTo(1);
    assertThat(json.path("steadyAckLatencyMillis").path("count").asLong()).isZero();
  }

  @Test
  void should_summarise_named_windows_refusals_and_resumes(@TempDir Path dir) throws Exception {
    MqttRunStats stats = new MqttRunStats();
    stats.window("cold", 0, 1);
    stats.window("warm", 1, 2);
    stats.connecting();
    stats.acked(400_000_000L); // 400 ms, second 0: cold only
    stats.refused(3);
    stats.refused(3);
    stats.refused(5);
    stats.dropped();
    stats.resumed(1_250);
    stats.resumed(40);

    Path file = dir.resolve("summary.json");
    stats.writeSummary(file, Map.of());
    JsonNode json = new ObjectMapper().readTree(file.toFile());

    assertThat(json.path("windows").path("cold").path("seconds").toString()).isEqualTo("[0,1]");
    assertThat(json.path("windows").path("cold").path("ackLatencyMillis").path("count").asLong())
        .isEqualTo(1);
    assertThat(json.path("windows").path("cold").path("ackLatencyMillis").path("max").asDouble())
        .isBetween(399.0, 401.0);
    assertThat(json.path("windows").path("warm").path("ackLatencyMillis").path("count").asLong())
        .isZero();
    assertThat(json.path("connackRefusals").toString()).isEqualTo("{\"0x03\":2,\"0x05\":1}");
    assertThat(json.path("drops").asLong()).isEqualTo(1);
    assertThat(json.path("resumeAfterDropMillis").path("count").asLong()).isEqualTo(2);
    assertThat(json.path("resumeAfterDropMillis").path("max").asDouble()).isBetween(1249.0, 1251.0);
  }
}
