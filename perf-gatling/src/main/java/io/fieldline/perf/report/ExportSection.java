package io.fieldline.perf.report;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * The export part of a {@link BenchReport} (bench/run.sh {@code EXPORT=off|kafka|kafka-outage}):
 * what the run did with the change feed, records delivered and found in the topic against the
 * messages acknowledged, the export latency (storage → delivered) from the server's histogram, the
 * broker's CPU, and for {@code kafka-outage} the broker's outage, the backlog, its drain and the
 * server's heap meanwhile. Reads {@code export.properties}, {@code export-samples.txt}, {@code
 * fieldline-metrics.txt} and {@code fieldline-metrics/} of the run directory (export-samples.txt:
 * {@code epochMillis stage lagRecords delivered heapUsedBytes oldGenUsedBytes}); renders nothing
 * for a run without {@code export.properties} ({@code EXPORT=none}). Stateless.
 */
final class ExportSection {

  static final String LATENCY = "fieldline_export_latency_seconds";
  static final String DELIVERED = "fieldline_export_delivered_total";
  static final String FEED_ENTRIES = "fieldline_feed_entries_total";
  static final String LAG = "fieldline_export_lag_records";

  private ExportSection() {}

  static void render(StringBuilder md, Path dir, @Nullable PhaseResult fieldline) {
    Properties export = properties(dir.resolve("export.properties"));
    String mode = export.getProperty("export", "");
    if (mode.isEmpty() || fieldline == null) {
      return;
    }
    PrometheusText end = PrometheusText.read(dir.resolve("fieldline-metrics.txt"));
    long acked = fieldline.json().path("acked").asLong();
    md.append("\nExport (`EXPORT=").append(mode).append("`): ");
    if (mode.equals("off")) {
      md.append(
          "the server ran with `FIELDLINE_FEED_ENABLED=false` (no change feed, no sink).\n\n");
    } else {
      md.append("one KAFKA sink (`")
          .append(export.getProperty("sink"))
          .append("`, filter `{}`, default batching) to topic `")
          .append(export.getProperty("topic"))
          .append("` of a one-node Kafka 4.4 broker (`./fieldline kafka`, KRaft, child JVM) on ")
          .append(export.getProperty("kafkaBootstrap"))
          .append("; the topic was auto-created (1 partition) by the sink's first send. One")
          .append(" record per message (each message holds one timestamp).\n\n");
    }
    md.append("| | Fieldline |\n| --- | ---: |\n");
    BenchReport.row(
        md,
        "change feed entries written (" + FEED_ENTRIES + ")",
        BenchReport.fmt(end.sum(FEED_ENTRIES), 0));
    BenchReport.row(md, "messages acknowledged (PUBACK)", BenchReport.fmt(acked, 0));
    BenchReport.row(
        md,
        "CPU µs per message, server + Cassandra (steady window)",
        BenchReport.fmt(fieldline.cpuMicrosPerUnit("server", "cassandra"), 0));
    if (!mode.equals("off")) {
      kafka(md, dir, export, end, fieldline, acked);
    }
    if (mode.equals("kafka-outage")) {
      outage(md, dir, export, fieldline);
    }
  }

  private static void kafka(
      StringBuilder md,
      Path dir,
      Properties export,
      PrometheusText end,
      PhaseResult fieldline,
      long acked) {
    double delivered = end.sum(DELIVERED);
    BenchReport.row(
        md,
        "records delivered (" + DELIVERED + ") ÷ messages acknowledged",
        BenchReport.fmt(delivered, 0)
            + " ÷ "
            + BenchReport.fmt(acked, 0)
            + " = "
            + ratio(delivered, acked, 4));
    String topic = export.getProperty("topicRecords", "");
    BenchReport.row(
        md,
        "records in the topic (a consumer read it to the end) ÷ messages acknowledged",
        topic.isEmpty()
            ? "not counted: " + export.getProperty("topicCheck", "skipped")
            : BenchReport.fmt(Long.parseLong(topic), 0)
                + " ÷ "
                + BenchReport.fmt(acked, 0)
                + " = "
                + ratio(Long.parseLong(topic), acked, 4)
                + (Long.parseLong(topic) >= acked
                    ? " (every acknowledged message there, at least once)"
                    : " (MISSING " + BenchReport.fmt(acked - Long.parseLong(topic), 0) + ")"));
    BenchReport.row(
        md,
        "lag after the load; time to reach it",
        export.getProperty("settleLagRecords", "?")
            + " records; "
            + export.getProperty("settleSeconds", "?")
            + " s");
    PrometheusText steady =
        PrometheusText.gainedOver(
            dir.resolve("fieldline-metrics"),
            "server",
            fieldline.fromMillis(),
            fieldline.toMillis());
    BenchReport.row(
        md,
        "export latency storage → delivered p50 / p99 / p99.9 ms (bucket upper bounds), steady"
            + " window"
            + (export.getProperty("export").equals("kafka-outage") ? " (the outage included)" : ""),
        latency(steady));
    BenchReport.row(
        md,
        "export latency storage → delivered p50 / p99 / p99.9 ms, whole run (topic creation"
            + " and any outage included)",
        latency(end));
    // A restarted broker (kafka-outage) is another process, sampled under its own label.
    List<String> brokers = new ArrayList<>();
    double brokerCores = 0;
    for (String label : new String[] {"kafka", "kafka-restarted"}) {
      if (fieldline.cpu().has(label)) {
        brokers.add(label);
        brokerCores += fieldline.cores(label);
      }
    }
    List<String> all = new ArrayList<>(List.of("server", "cassandra"));
    all.addAll(brokers);
    BenchReport.row(
        md,
        "CPU cores: Kafka broker (steady window); µs per message",
        brokers.isEmpty()
            ? "-"
            : BenchReport.fmt(brokerCores, 2)
                + "; "
                + BenchReport.fmt(fieldline.cpuMicrosPerUnit(brokers.toArray(String[]::new)), 0));
    BenchReport.row(
        md,
        "CPU µs per message, server + Cassandra + Kafka broker (steady window)",
        BenchReport.fmt(fieldline.cpuMicrosPerUnit(all.toArray(String[]::new)), 0));
  }

  private static String latency(PrometheusText metrics) {
    double count = metrics.sum(LATENCY + "_count");
    if (count <= 0) {
      return "-";
    }
    return quantile(metrics, 0.50)
        + " / "
        + quantile(metrics, 0.99)
        + " / "
        + quantile(metrics, 0.999)
        + " ("
        + BenchReport.fmt(count, 0)
        + " records, mean "
        + BenchReport.fmt(1000 * metrics.sum(LATENCY + "_sum") / count, 1)
        + ")";
  }

  /** A quantile's bucket bound in ms; "> largest bound" above the histogram's range. */
  private static String quantile(PrometheusText metrics, double q) {
    double seconds = metrics.quantileUpperBound(LATENCY, q);
    if (Double.isInfinite(seconds)) {
      return "> " + BenchReport.fmt(1000 * metrics.largestFiniteBound(LATENCY), 0);
    }
    return BenchReport.fmt(1000 * seconds, 1);
  }

  /** One line of export-samples.txt. */
  private record Sample(
      long millis, String stage, long lag, long delivered, long heap, long oldGen) {}

  private static void outage(StringBuilder md, Path dir, Properties export, PhaseResult fieldline) {
    long load = millis(export, "loadStartEpochMillis");
    long stop = millis(export, "brokerStopEpochMillis");
    long down = millis(export, "brokerDownEpochMillis");
    long restart = millis(export, "brokerRestartEpochMillis");
    long ready = millis(export, "brokerReadyEpochMillis");
    long first = millis(export, "firstDeliveryEpochMillis");
    long drained = millis(export, "drainedEpochMillis");
    if (load == 0 || ready == 0) {
      md.append("\nBroker outage: not measured (the load did not start or the broker did not")
          .append(" come back; see bench.log).\n");
      return;
    }
    long backlog = Long.parseLong(export.getProperty("backlogRecords", "0"));
    md.append("\nBroker outage (`OUTAGE=")
        .append(export.getProperty("outageSeconds"))
        .append("`), seconds from the load start (first feed entry): stop at ")
        .append(seconds(stop - load))
        .append(" (controlled shutdown done at ")
        .append(seconds(down - load))
        .append("), restart at ")
        .append(seconds(restart - load))
        .append(", ready at ")
        .append(seconds(ready - load))
        .append(" (no broker for ")
        .append(seconds(ready - stop))
        .append(" s).\n\n| | |\n| --- | ---: |\n");
    BenchReport.row(
        md,
        "backlog when the broker was ready again (lag)",
        BenchReport.fmt(backlog, 0) + " records");
    BenchReport.row(
        md,
        "broker ready → first delivery (the sink's retry backoff)",
        first == 0 ? "-" : seconds(first - ready) + " s");
    String level = export.getProperty("drainLevelRecords", "0");
    if (drained == 0) {
      BenchReport.row(
          md, "drain: broker ready → lag ≤ " + level + " records", "not within EXPORT_DRAIN");
    } else {
      double drainSeconds = (drained - ready) / 1000.0;
      long deliveredDuring =
          Long.parseLong(export.getProperty("deliveredAtDrained", "0"))
              - Long.parseLong(export.getProperty("deliveredAtReady", "0"));
      BenchReport.row(
          md,
          "drain: broker ready → lag back to its level before the outage (≤ "
              + level
              + " records, the median of the 10 s before the stop)",
          seconds(drained - ready) + " s");
      BenchReport.row(
          md,
          "drain rate: backlog ÷ drain time",
          BenchReport.fmt(backlog / drainSeconds, 0) + " records/s");
      BenchReport.row(
          md,
          "records delivered per second during the drain (new ones included)",
          BenchReport.fmt(deliveredDuring / drainSeconds, 0));
    }
    List<Sample> samples = samples(dir.resolve("export-samples.txt"));
    BenchReport.row(
        md,
        "server heap used MiB min / mean / max (every 2 s)",
        "before the outage "
            + heap(samples, "before", false)
            + "; broker down "
            + heap(samples, "outage", false)
            + "; drain "
            + heap(samples, "drain", false));
    BenchReport.row(
        md,
        "server heap old generation used MiB min / max (the retained part)",
        "before the outage "
            + heap(samples, "before", true)
            + "; broker down "
            + heap(samples, "outage", true)
            + "; drain "
            + heap(samples, "drain", true));
    BenchReport.row(
        md,
        "CPU cores server / Cassandra while the broker was down",
        BenchReport.fmt(fieldline.cpu().cores("server", down, restart), 2)
            + " / "
            + BenchReport.fmt(fieldline.cpu().cores("cassandra", down, restart), 2));
  }

  private static String heap(List<Sample> samples, String stage, boolean oldGen) {
    long min = Long.MAX_VALUE;
    long max = 0;
    double sum = 0;
    int n = 0;
    for (Sample sample : samples) {
      if (sample.stage().equals(stage)) {
        long value = oldGen ? sample.oldGen() : sample.heap();
        min = Math.min(min, value);
        max = Math.max(max, value);
        sum += value;
        n++;
      }
    }
    if (n == 0) {
      return "-";
    }
    double mib = 1024.0 * 1024.0;
    return oldGen
        ? BenchReport.fmt(min / mib, 0) + " / " + BenchReport.fmt(max / mib, 0)
        : BenchReport.fmt(min / mib, 0)
            + " / "
            + BenchReport.fmt(sum / n / mib, 0)
            + " / "
            + BenchReport.fmt(max / mib, 0);
  }

  private static List<Sample> samples(Path file) {
    List<Sample> samples = new ArrayList<>();
    if (!Files.isRegularFile(file)) {
      return samples;
    }
    try {
      for (String line : Files.readAllLines(file)) {
        String[] parts = line.strip().split("\\s+");
        if (parts.length == 6) {
          samples.add(
              new Sample(
                  Long.parseLong(parts[0]),
                  parts[1],
                  Long.parseLong(parts[2]),
                  Long.parseLong(parts[3]),
                  Long.parseLong(parts[4]),
                  Long.parseLong(parts[5])));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return samples;
  }

  private static Properties properties(Path file) {
    Properties properties = new Properties();
    if (Files.isRegularFile(file)) {
      try (Reader in = Files.newBufferedReader(file)) {
        properties.load(in);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return properties;
  }

  private static long millis(Properties properties, String key) {
    String value = properties.getProperty(key, "").strip();
    return value.isEmpty() ? 0 : Long.parseLong(value);
  }

  private static String seconds(long millis) {
    return BenchReport.fmt(millis / 1000.0, 1);
  }

  private static String ratio(double a, double b, int decimals) {
    return b == 0 ? "-" : BenchReport.fmt(a / b, decimals);
  }
}
