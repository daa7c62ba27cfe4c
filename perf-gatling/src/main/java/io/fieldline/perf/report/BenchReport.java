package io.fieldline.perf.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.perf.CommandLine;
import io.fieldline.perf.mqtt.MqttRunStats;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * Renders one bench/run.sh run directory as the Markdown section of docs/performance.md: the
 * command and machine, offered and achieved rates, PUBACK latency, the latency buckets, CPU and
 * memory per component, acked/stored/missing, and the ratios Fieldline ÷ Mosquitto, Fieldline ÷
 * HiveMQ CE (throughput, p99, CPU per message), Fieldline ÷ raw-driver ceiling and the CPU cost per
 * persisted message against the raw writer's per row; when the run had a cluster phase, the single
 * node next to the cluster and the cost of forwarding ({@link ClusterComparison}). A run with
 * {@code TLS=1} ({@code tls} in bench.properties) says so in the column heads, names its
 * certificate, providers and negotiated suites, and adds the TLS handshake times.
 *
 * <p>Rates and CPU are taken over each phase's steady window (all devices connected; the raw writer
 * after its warm-up), so ramp-up, JVM start and report generation are not counted.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.report.BenchReport --run-dir bench/results/... [--append docs/performance.md]
 * </pre>
 */
public final class BenchReport {

  private final Path dir;
  private final Properties meta = new Properties();
  private final @Nullable PhaseResult fieldline;
  private final @Nullable PhaseResult mosquitto;
  private final @Nullable PhaseResult hivemq;
  private final @Nullable PhaseResult raw;
  private final @Nullable JsonNode check;
  private final @Nullable ClusterComparison cluster;

  BenchReport(Path dir) throws IOException {
    this.dir = dir;
    try (Reader in = Files.newBufferedReader(dir.resolve("bench.properties"))) {
      meta.load(in);
    }
    double ticks = Double.parseDouble(meta.getProperty("clkTck", "100"));
    fieldline =
        PhaseResult.mqtt(
            dir.resolve("fieldline-summary.json"), dir.resolve("cpu-fieldline.txt"), ticks);
    mosquitto =
        PhaseResult.mqtt(
            dir.resolve("mosquitto-summary.json"), dir.resolve("cpu-mosquitto.txt"), ticks);
    hivemq =
        PhaseResult.mqtt(dir.resolve("hivemq-summary.json"), dir.resolve("cpu-hivemq.txt"), ticks);
    raw = PhaseResult.raw(dir.resolve("raw.json"), dir.resolve("cpu-raw.txt"), ticks);
    check = readJson(dir.resolve("fieldline-check.json"));
    PhaseResult clusterPhase =
        PhaseResult.mqtt(
            dir.resolve("cluster-summary.json"), dir.resolve("cpu-cluster.txt"), ticks);
    if (clusterPhase == null) {
      cluster = null;
    } else {
      int nodes = Integer.parseInt(meta.getProperty("clusterNodes", "2"));
      PrometheusText gained = PrometheusText.parse("");
      for (int i = 1; i <= nodes; i++) {
        gained =
            gained.plus(
                PrometheusText.read(dir.resolve("cluster-metrics-node-" + i + ".txt"))
                    .minus(
                        PrometheusText.read(
                            dir.resolve("cluster-metrics-before-node-" + i + ".txt"))));
      }
      PrometheusText steady = PrometheusText.parse("");
      for (int i = 1; i <= nodes; i++) {
        steady =
            steady.plus(
                PrometheusText.gainedOver(
                    dir.resolve("cluster-metrics"),
                    "node-" + i,
                    clusterPhase.fromMillis(),
                    clusterPhase.toMillis()));
      }
      cluster =
          new ClusterComparison(
              fieldline,
              check,
              PrometheusText.read(dir.resolve("fieldline-metrics.txt")),
              clusterPhase,
              readJson(dir.resolve("cluster-check.json")),
              gained,
              steady,
              nodes);
    }
  }

  static @Nullable JsonNode readJson(Path file) throws IOException {
    return Files.isRegularFile(file) ? new ObjectMapper().readTree(file.toFile()) : null;
  }

  public static void main(String[] args) throws IOException {
    CommandLine line = CommandLine.parse(args);
    output(new BenchReport(Path.of(line.get("run-dir"))).render(), line.optional("append"));
  }

  /** Prints a report and, with {@code append}, adds it to the end of that file. */
  static void output(String markdown, @Nullable String append) throws IOException {
    System.out.println(markdown);
    if (append != null) {
      Files.writeString(
          Path.of(append),
          "\n" + markdown,
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
  }

  /** The section's heading, command, machine and load average, from bench.properties. */
  static void heading(StringBuilder md, Properties meta) {
    md.append("### ")
        .append(meta.getProperty("scenario"))
        .append(": ")
        .append(meta.getProperty("describe"))
        .append(" (")
        .append(meta.getProperty("date"))
        .append(")\n\n");
    md.append("- Command: `").append(meta.getProperty("command")).append("`\n");
    md.append("- Machine: ").append(meta.getProperty("machine")).append("\n");
    md.append("- Load average before / after: ")
        .append(meta.getProperty("loadBefore", "?"))
        .append(" / ")
        .append(meta.getProperty("loadAfter", "?"))
        .append("\n");
  }

  String render() {
    StringBuilder md = new StringBuilder();
    int keys = Integer.parseInt(meta.getProperty("keys", "4"));
    heading(md, meta);
    md.append("- Steady windows: ");
    appendWindow(md, "Fieldline", fieldline);
    appendWindow(md, "Mosquitto", mosquitto);
    appendWindow(md, "HiveMQ CE", hivemq);
    appendWindow(md, "raw writer", raw);
    if (cluster != null) {
      appendWindow(md, cluster.nodes() + "-node cluster", cluster.cluster());
    }
    md.append("\n- Gatling reports: `").append(meta.getProperty("runDir")).append("/gatling-*`\n");
    String tls = meta.getProperty("tls", "");
    String over = tls.isEmpty() ? "" : " over TLS";
    if (!tls.isEmpty()) {
      List<String> sessions = new ArrayList<>();
      addSessions(sessions, "Fieldline", fieldline);
      addSessions(sessions, "Mosquitto", mosquitto);
      addSessions(sessions, "HiveMQ CE", hivemq);
      md.append("- TLS: ")
          .append(tls)
          .append("; negotiated: ")
          .append(String.join("; ", sessions))
          .append("\n");
    }
    md.append("\n");

    md.append("| | Fieldline")
        .append(over)
        .append(" (PUBACK after the Cassandra write) | Mosquitto ")
        .append(meta.getProperty("mosquittoVersion", ""))
        .append(over)
        .append(" (no storage) | HiveMQ CE ")
        .append(meta.getProperty("hivemqVersion", ""))
        .append(over)
        .append(" (no storage) | raw driver writer, ")
        .append(raw == null ? "-" : raw.json().path("mode").asText())
        .append(" mode (ceiling) |\n");
    md.append("| --- | ---: | ---: | ---: | ---: |\n");
    row(
        md,
        "msgs/s offered",
        offered(fieldline),
        offered(mosquitto),
        offered(hivemq),
        raw == null ? "-" : offeredRaw(raw));
    row(
        md,
        "msgs/s achieved (steady window)",
        rate(fieldline),
        rate(mosquitto),
        rate(hivemq),
        raw == null ? "-" : fmt(raw.rate() / keys, 0) + " (" + fmt(raw.rate(), 0) + " rows/s)");
    row(
        md,
        "requests sent / acked / KO",
        counts(fieldline),
        counts(mosquitto),
        counts(hivemq),
        raw == null
            ? "-"
            : raw.json().path("rowsWritten").asLong()
                + " rows / "
                + raw.json().path("requestsFailed").asLong()
                + " failed");
    row(
        md,
        "acked / stored / missing (partial)",
        storedLine(),
        mosquitto == null ? "-" : "nothing stored",
        hivemq == null ? "-" : "nothing stored",
        "-");
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms, steady window",
        latency(fieldline, "steadyAckLatencyMillis"),
        latency(mosquitto, "steadyAckLatencyMillis"),
        latency(hivemq, "steadyAckLatencyMillis"),
        raw == null
            ? "-"
            : latencyOf(raw.json().path("requestLatencyMillis")) + " (per request, after warm-up)");
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms, whole run (ramp and warm-up included)",
        latency(fieldline, "ackLatencyMillis"),
        latency(mosquitto, "ackLatencyMillis"),
        latency(hivemq, "ackLatencyMillis"),
        "-");
    row(
        md,
        "connects OK; TCP connect → CONNACK p50 / p95 / p99 / p99.9 / max ms",
        connects(fieldline),
        connects(mosquitto),
        connects(hivemq),
        "-");
    if (!tls.isEmpty()) {
      row(
          md,
          "TLS handshakes; TCP connected → handshake done p50 / p95 / p99 / p99.9 / max ms",
          handshakes(fieldline),
          handshakes(mosquitto),
          handshakes(hivemq),
          "-");
    }
    row(
        md,
        "CPU cores: broker / server",
        cores(fieldline, "server"),
        cores(mosquitto, "mosquitto"),
        cores(hivemq, "hivemq"),
        cores(raw, "server") + " (idle server)");
    row(
        md,
        "CPU cores: Cassandra",
        cores(fieldline, "cassandra"),
        "-",
        "-",
        cores(raw, "cassandra"));
    row(
        md,
        "CPU cores: load generator",
        cores(fieldline, "generator"),
        cores(mosquitto, "generator"),
        cores(hivemq, "generator"),
        cores(raw, "writer"));
    row(
        md,
        "CPU cores: other processes on the machine",
        others(fieldline),
        others(mosquitto),
        others(hivemq),
        others(raw));
    row(
        md,
        "max RSS MiB: broker / Cassandra / generator",
        rss(fieldline, "server")
            + " / "
            + rss(fieldline, "cassandra")
            + " / "
            + rss(fieldline, "generator"),
        rss(mosquitto, "mosquitto") + " / - / " + rss(mosquitto, "generator"),
        rss(hivemq, "hivemq") + " / - / " + rss(hivemq, "generator"),
        "- / " + rss(raw, "cassandra") + " / " + rss(raw, "writer"));
    double fieldlinePerMsg =
        fieldline == null ? Double.NaN : fieldline.cpuMicrosPerUnit("server", "cassandra");
    double rawPerRow = raw == null ? Double.NaN : raw.cpuMicrosPerUnit("writer", "cassandra");
    row(
        md,
        "CPU µs per persisted message (server + Cassandra) / per row (writer + Cassandra)",
        fmt(fieldlinePerMsg, 0) + " per message",
        mosquitto == null
            ? "-"
            : fmt(mosquitto.cpuMicrosPerUnit("mosquitto"), 0) + " per message (broker only)",
        hivemq == null
            ? "-"
            : fmt(hivemq.cpuMicrosPerUnit("hivemq"), 0) + " per message (broker only)",
        fmt(rawPerRow, 0)
            + " per row ("
            + fmt(rawPerRow * keys, 0)
            + " per "
            + keys
            + "-row message)");
    row(
        md,
        "CPU µs per message: the broker / server process alone (Fieldline without Cassandra)",
        perUnit(fieldline, "server"),
        perUnit(mosquitto, "mosquitto"),
        perUnit(hivemq, "hivemq"),
        "-");
    row(
        md,
        "CPU µs per message: load generator",
        perUnit(fieldline, "generator"),
        perUnit(mosquitto, "generator"),
        perUnit(hivemq, "generator"),
        raw == null ? "-" : fmt(raw.cpuMicrosPerUnit("writer") * keys, 0) + " per message");
    md.append("\n");

    md.append("PUBACK latency buckets (share of acknowledged messages):\n\n");
    md.append(
        "| bucket | Fieldline, steady window | Fieldline, whole run | Mosquitto, steady window |"
            + " HiveMQ CE, steady window |\n| --- | ---: | ---: | ---: | ---: |\n");
    for (String bucket : MqttRunStats.BUCKET_LABELS) {
      md.append("| ")
          .append(bucket)
          .append(" | ")
          .append(bucket(fieldline, "steadyAckLatencyBuckets", bucket))
          .append(" | ")
          .append(bucket(fieldline, "ackLatencyBuckets", bucket))
          .append(" | ")
          .append(bucket(mosquitto, "steadyAckLatencyBuckets", bucket))
          .append(" | ")
          .append(bucket(hivemq, "steadyAckLatencyBuckets", bucket))
          .append(" |\n");
    }
    md.append("\n");

    md.append("Ratios (steady windows):\n\n");
    brokerRatios(md, "Mosquitto", mosquitto, "mosquitto", fieldlinePerMsg);
    brokerRatios(md, "HiveMQ CE", hivemq, "hivemq", fieldlinePerMsg);
    md.append("- Fieldline ÷ raw-driver ceiling, msgs/s (raw rows/s ÷ ")
        .append(keys)
        .append("): ")
        .append(ratio(rateOf(fieldline), raw == null ? Double.NaN : raw.rate() / keys))
        .append("\n");
    md.append(
            "- CPU per persisted message (Fieldline + Cassandra) ÷ CPU per row (raw writer +"
                + " Cassandra): ")
        .append(ratio(fieldlinePerMsg, rawPerRow))
        .append(" (target ≤ 1.0)\n");
    ScenarioSections.coldStart(md, fieldline, meta);
    ExportSection.render(md, dir, fieldline);
    ScenarioSections.points(md, fieldline, check, keys);
    ScenarioSections.reconnectStorm(md, fieldline, mosquitto, hivemq, storedLine());
    if (cluster != null) {
      md.append("\n");
      cluster.render(md);
    }
    return md.toString();
  }

  /**
   * Fieldline ÷ a broker without storage: msgs/s, steady p99, and CPU per message (server +
   * Cassandra against the broker alone); nothing when the broker did not run.
   */
  private void brokerRatios(
      StringBuilder md,
      String name,
      @Nullable PhaseResult broker,
      String label,
      double fieldlinePerMsg) {
    if (broker == null) {
      return;
    }
    md.append("- Fieldline ÷ ")
        .append(name)
        .append(", msgs/s: ")
        .append(ratio(rateOf(fieldline), rateOf(broker)))
        .append("; PUBACK p99 (steady): ")
        .append(ratio(p99(fieldline), p99(broker)))
        .append("; CPU µs per message (server + Cassandra ÷ broker): ")
        .append(ratio(fieldlinePerMsg, broker.cpuMicrosPerUnit(label)))
        .append("\n");
  }

  private static double p99(@Nullable PhaseResult phase) {
    if (phase == null || phase.json().path("steadyAckLatencyMillis").path("count").asLong() == 0) {
      return Double.NaN;
    }
    return phase.json().path("steadyAckLatencyMillis").path("p99").asDouble();
  }

  private static void appendWindow(StringBuilder md, String name, @Nullable PhaseResult phase) {
    if (phase != null) {
      md.append(name).append(' ').append(fmt(phase.windowSeconds(), 0)).append(" s; ");
    }
  }

  static void row(StringBuilder md, String name, String... cells) {
    md.append("| ").append(name);
    for (String cell : cells) {
      md.append(" | ").append(cell);
    }
    md.append(" |\n");
  }

  static String offered(@Nullable PhaseResult phase) {
    if (phase == null) {
      return "-";
    }
    double offered = phase.json().path("offeredPerSecond").asDouble();
    return offered > 0
        ? fmt(offered, 0)
        : "closed loop, " + phase.json().path("devices").asInt() + " devices × 1 in flight";
  }

  private static String offeredRaw(PhaseResult raw) {
    double offered = raw.json().path("offeredMessagesPerSecond").asDouble();
    return offered > 0
        ? fmt(offered, 0)
        : "closed loop, " + raw.json().path("inflight").asInt() + " requests in flight";
  }

  private static double rateOf(@Nullable PhaseResult phase) {
    return phase == null ? Double.NaN : phase.rate();
  }

  static String rate(@Nullable PhaseResult phase) {
    return phase == null ? "-" : fmt(phase.rate(), 0);
  }

  static String counts(@Nullable PhaseResult phase) {
    if (phase == null) {
      return "-";
    }
    long ko = 0;
    for (JsonNode count : phase.json().path("failures")) {
      ko += count.asLong();
    }
    return phase.json().path("sent").asLong()
        + " / "
        + phase.json().path("acked").asLong()
        + " / "
        + ko;
  }

  private String storedLine() {
    if (check == null) {
      return "not checked";
    }
    String unit = check.path("unit").asText("");
    return (unit.isEmpty() ? "" : unit + ": ")
        + check.path("acked").asLong()
        + " / "
        + check.path("storedAcked").asLong()
        + " / "
        + check.path("missing").asLong()
        + " ("
        + check.path("partial").asLong()
        + "); "
        + check.path("storedNotAcked").asLong()
        + " stored but not acked";
  }

  static String connects(@Nullable PhaseResult phase) {
    return phase == null
        ? "-"
        : phase.json().path("connects").asLong()
            + "; "
            + latencyOf(phase.json().path("connectLatencyMillis"));
  }

  private static String handshakes(@Nullable PhaseResult phase) {
    if (phase == null) {
      return "-";
    }
    JsonNode millis = phase.json().path("tlsHandshakeLatencyMillis");
    long count = millis.path("count").asLong();
    return count == 0 ? "0" : count + "; " + latencyOf(millis);
  }

  /** "Fieldline TLSv1.3 TLS_AES_256_GCM_SHA384 × 1,000" for the suites a phase negotiated. */
  private static void addSessions(List<String> out, String name, @Nullable PhaseResult phase) {
    if (phase == null) {
      return;
    }
    StringBuilder line = new StringBuilder(name);
    JsonNode sessions = phase.json().path("tlsSessions");
    if (sessions.isEmpty()) {
      line.append(" none");
    }
    for (Map.Entry<String, JsonNode> session : sessions.properties()) {
      line.append(' ')
          .append(session.getKey())
          .append(" × ")
          .append(fmt(session.getValue().asLong(), 0));
    }
    out.add(line.toString());
  }

  static String latency(@Nullable PhaseResult phase, String field) {
    return phase == null || phase.json().path(field).path("count").asLong() == 0
        ? "-"
        : latencyOf(phase.json().path(field));
  }

  static String latencyOf(JsonNode millis) {
    return fmt(millis.path("p50").asDouble(), 1)
        + " / "
        + fmt(millis.path("p95").asDouble(), 1)
        + " / "
        + fmt(millis.path("p99").asDouble(), 1)
        + " / "
        + fmt(millis.path("p999").asDouble(), 1)
        + " / "
        + fmt(millis.path("max").asDouble(), 0);
  }

  private static String cores(@Nullable PhaseResult phase, String label) {
    return phase == null || !phase.cpu().has(label) ? "-" : fmt(phase.cores(label), 2);
  }

  /** Busy cores of the whole machine minus the phase's own processes. */
  static String others(@Nullable PhaseResult phase) {
    if (phase == null || !phase.cpu().has("machine")) {
      return "-";
    }
    double own = 0;
    for (String label :
        new String[] {
          "server",
          "cassandra",
          "generator",
          "writer",
          "mosquitto",
          "hivemq",
          "kafka",
          "kafka-restarted"
        }) {
      if (phase.cpu().has(label)) {
        own += phase.cores(label);
      }
    }
    return fmt(Math.max(0, phase.cores("machine") - own), 2);
  }

  private static String rss(@Nullable PhaseResult phase, String label) {
    return phase == null || !phase.cpu().has(label) ? "-" : fmt(phase.cpu().maxRssMib(label), 0);
  }

  private static String perUnit(@Nullable PhaseResult phase, String label) {
    return phase == null || !phase.cpu().has(label) ? "-" : fmt(phase.cpuMicrosPerUnit(label), 0);
  }

  private static String bucket(@Nullable PhaseResult phase, String field, String bucket) {
    if (phase == null) {
      return "-";
    }
    long total = 0;
    for (JsonNode count : phase.json().path(field)) {
      total += count.asLong();
    }
    long count = phase.json().path(field).path(bucket).asLong();
    return total == 0 ? "-" : fmt(100.0 * count / total, 2) + " % (" + count + ")";
  }

  private static String ratio(double a, double b) {
    return Double.isNaN(a) || Double.isNaN(b) || b == 0 ? "-" : fmt(a / b, 2);
  }

  static String fmt(double value, int decimals) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return "-";
    }
    return String.format(Locale.ROOT, "%,." + decimals + "f", value);
  }
}
