package io.fieldline.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrometheusTextTest {

  private static final String SCRAPE =
      """
      # HELP fieldline_cluster_forwarded_total Device messages forwarded to their owner node
      # TYPE fieldline_cluster_forwarded_total counter
      fieldline_cluster_forwarded_total 120.0
      fieldline_cluster_forward_failures_total{reason="timeout"} 1.0
      fieldline_cluster_forward_failures_total{reason="overloaded"} 2.0
      fieldline_cluster_forward_latency_seconds_bucket{le="0.001"} 10
      fieldline_cluster_forward_latency_seconds_bucket{le="0.002"} 90
      fieldline_cluster_forward_latency_seconds_bucket{le="0.004"} 99
      fieldline_cluster_forward_latency_seconds_bucket{le="+Inf"} 100
      fieldline_cluster_forward_latency_seconds_count 100
      """;

  @Test
  void should_sum_every_series_of_a_name() {
    PrometheusText text = PrometheusText.parse(SCRAPE);

    assertThat(text.sum("fieldline_cluster_forwarded_total")).isEqualTo(120.0);
    assertThat(text.sum("fieldline_cluster_forward_failures_total")).isEqualTo(3.0);
    assertThat(text.sum("no_such_meter")).isZero();
  }

  @Test
  void should_give_the_upper_bound_of_the_bucket_holding_a_quantile() {
    PrometheusText text = PrometheusText.parse(SCRAPE);

    assertThat(text.quantileUpperBound("fieldline_cluster_forward_latency_seconds", 0.5))
        .isEqualTo(0.002);
    assertThat(text.quantileUpperBound("fieldline_cluster_forward_latency_seconds", 0.99))
        .isEqualTo(0.004);
    assertThat(text.quantileUpperBound("fieldline_cluster_forward_latency_seconds", 0.999))
        .isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(PrometheusText.parse("").quantileUpperBound("x", 0.5)).isNaN();
  }

  @Test
  void should_add_nodes_and_subtract_an_earlier_scrape_series_by_series() {
    PrometheusText before =
        PrometheusText.parse(
            "fieldline_cluster_forwarded_total 20.0\n"
                + "fieldline_cluster_forward_failures_total{reason=\"timeout\"} 1.0\n");
    PrometheusText after = PrometheusText.parse(SCRAPE);

    PrometheusText gained = after.minus(before);
    PrometheusText twoNodes = gained.plus(gained);

    assertThat(gained.sum("fieldline_cluster_forwarded_total")).isEqualTo(100.0);
    assertThat(gained.sum("fieldline_cluster_forward_failures_total")).isEqualTo(2.0);
    assertThat(twoNodes.sum("fieldline_cluster_forwarded_total")).isEqualTo(200.0);
    assertThat(twoNodes.quantileUpperBound("fieldline_cluster_forward_latency_seconds", 0.5))
        .isEqualTo(0.002);
  }

  @Test
  void should_take_the_scrapes_just_outside_a_window(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("node-1-1000.txt"), "fieldline_cluster_forwarded_total 1\n");
    Files.writeString(dir.resolve("node-1-6000.txt"), "fieldline_cluster_forwarded_total 5\n");
    Files.writeString(dir.resolve("node-1-11000.txt"), "fieldline_cluster_forwarded_total 50\n");
    Files.writeString(dir.resolve("node-1-16000.txt"), "fieldline_cluster_forwarded_total 80\n");
    Files.writeString(dir.resolve("node-1-21000.txt"), "fieldline_cluster_forwarded_total 99\n");
    Files.writeString(dir.resolve("node-2-1000.txt"), "fieldline_cluster_forwarded_total 7\n");

    PrometheusText window = PrometheusText.gainedOver(dir, "node-1", 7000, 16000);
    PrometheusText beyond = PrometheusText.gainedOver(dir, "node-1", 0, 30000);

    assertThat(window.sum("fieldline_cluster_forwarded_total")).isEqualTo(75.0);
    assertThat(beyond.sum("fieldline_cluster_forwarded_total")).isEqualTo(98.0);
    assertThat(PrometheusText.gainedOver(dir, "node-2", 0, 30000).isEmpty()).isTrue();
  }
}
