package io.fieldline.perf.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bench/run.sh {@code EXPORT=kafka-outage} run directory with made-up numbers: 1,000 messages
 * acknowledged in a 10 s steady window, 1,000 records delivered and in the topic, a broker down
 * from second 10 to second 30 of the load, 600 records of backlog drained in 3 s.
 */
class ExportSectionTest {

  private static final long START = 1_700_000_000_000L;
  private static final long MIB = 1L << 20;

  @TempDir Path run;

  @BeforeEach
  void writeRun() throws IOException {
    Files.writeString(
        run.resolve("fieldline-summary.json"),
        """
        {"startEpochMillis": %d, "steadyWindowSeconds": [0, 10], "acked": 1000,
         "ackedPerSecond": [100, 100, 100, 100, 100, 100, 100, 100, 100, 100]}
        """
            .formatted(START));
    Files.writeString(
        run.resolve("cpu-fieldline.txt"),
        cpu("server", 0, 50) + cpu("cassandra", 0, 30) + cpu("kafka", 0, 10));
    // 1,000 records: 900 within 50 ms, 98 within 1 s, two beyond the histogram's 30 s.
    String latency =
        """
        fieldline_export_latency_seconds_bucket{le="0.05"} 900
        fieldline_export_latency_seconds_bucket{le="1.0"} 998
        fieldline_export_latency_seconds_bucket{le="30.0"} 998
        fieldline_export_latency_seconds_bucket{le="+Inf"} 1000
        fieldline_export_latency_seconds_count 1000
        fieldline_export_latency_seconds_sum 100
        """;
    Files.writeString(
        run.resolve("fieldline-metrics.txt"),
        latency
            + "fieldline_export_delivered_total{sink=\"bench-kafka\"} 1000.0\n"
            + "fieldline_feed_entries_total 1000.0\n");
    Files.writeString(
        run.resolve("export.properties"),
        """
        export=kafka-outage
        kafkaBootstrap=127.0.0.1:9092
        topic=fieldline-bench
        sink=bench-kafka
        outageSeconds=10
        settleSeconds=0.5
        settleLagRecords=0
        topicRecords=1000
        loadStartEpochMillis=%d
        brokerStopEpochMillis=%d
        brokerDownEpochMillis=%d
        brokerRestartEpochMillis=%d
        brokerReadyEpochMillis=%d
        drainLevelRecords=2
        backlogRecords=600
        deliveredAtReady=400
        firstDeliveryEpochMillis=%d
        drainedEpochMillis=%d
        deliveredAtDrained=1300
        """
            .formatted(
                START,
                START + 10_000,
                START + 12_000,
                START + 20_000,
                START + 30_000,
                START + 31_000,
                START + 33_000));
    Files.writeString(
        run.resolve("export-samples.txt"),
        (START + 2_000)
            + " before 0 100 "
            + 100 * MIB
            + " "
            + 40 * MIB
            + "\n"
            + (START + 14_000)
            + " outage 300 400 "
            + 120 * MIB
            + " "
            + 41 * MIB
            + "\n"
            + (START + 16_000)
            + " outage 500 400 "
            + 80 * MIB
            + " "
            + 42 * MIB
            + "\n");
  }

  @Test
  void should_report_delivery_latency_and_the_drain_when_the_broker_was_down() throws IOException {
    String markdown = render();

    assertThat(markdown)
        .contains("Export (`EXPORT=kafka-outage`)")
        .contains(
            "| records delivered (fieldline_export_delivered_total) ÷ messages acknowledged"
                + " | 1,000 ÷ 1,000 = 1.0000 |")
        .contains("1,000 ÷ 1,000 = 1.0000 (every acknowledged message there, at least once)")
        .contains("whole run (topic creation and any outage included) | 50.0 / 1,000.0 / > 30,000")
        .contains("| CPU cores: Kafka broker (steady window); µs per message | 0.01; 100 |")
        .contains("| backlog when the broker was ready again (lag) | 600 records |")
        .contains("| broker ready → first delivery (the sink's retry backoff) | 1.0 s |")
        .contains("the median of the 10 s before the stop) | 3.0 s |")
        .contains("| drain rate: backlog ÷ drain time | 200 records/s |")
        .contains("| records delivered per second during the drain (new ones included) | 300 |")
        .contains("before the outage 100 / 100 / 100; broker down 80 / 100 / 120; drain -")
        .contains("before the outage 40 / 40; broker down 41 / 42; drain -");
  }

  @Test
  void should_say_when_the_topic_holds_fewer_records_than_were_acknowledged() throws IOException {
    Path props = run.resolve("export.properties");
    Files.writeString(
        props, Files.readString(props).replace("topicRecords=1000", "topicRecords=990"));

    assertThat(render()).contains("990 ÷ 1,000 = 0.9900 (MISSING 10)");
  }

  @Test
  void should_render_nothing_without_an_export() throws IOException {
    Files.delete(run.resolve("export.properties"));

    assertThat(render()).isEmpty();
  }

  private String render() {
    PhaseResult fieldline =
        PhaseResult.mqtt(
            run.resolve("fieldline-summary.json"), run.resolve("cpu-fieldline.txt"), 100);
    StringBuilder md = new StringBuilder();
    ExportSection.render(md, run, fieldline);
    return md.toString();
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
}
