package io.fieldline.perf.report;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.perf.CommandLine;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Function;

/**
 * Renders a bench/run.sh LiveUpdates run as a Markdown section of docs/performance.md: for the
 * single node ({@code fieldline-summary.json}) and the cluster with the devices on node 2 and the
 * WebSocket sessions on node 1 ({@code cluster-summary.json}), the subscriptions and their first
 * updates, the updates expected, received and lost, publish → update and PUBACK → update latency
 * next to the PUBACK latency of the same run, for the first {@code cold} seconds and the rest, CPU
 * per process over the same windows, and the target of issue 15 met or missed by how much.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.report.LiveReport --run-dir bench/results/... [--append docs/performance.md]
 * </pre>
 */
public final class LiveReport {

  /** Issue 15: p99 of an update at most this much on top of the PUBACK latency, in ms. */
  static final double TARGET_ON_TOP_MILLIS = 50;

  private record Phase(String title, JsonNode json, CpuSamples cpu, List<String> servers) {}

  private final Properties meta = new Properties();
  private final List<Phase> phases = new ArrayList<>();

  LiveReport(Path dir) throws IOException {
    try (Reader in = Files.newBufferedReader(dir.resolve("bench.properties"))) {
      meta.load(in);
    }
    double ticks = Double.parseDouble(meta.getProperty("clkTck", "100"));
    JsonNode single = BenchReport.readJson(dir.resolve("fieldline-summary.json"));
    if (single != null) {
      phases.add(
          new Phase(
              "Fieldline, 1 node",
              single,
              CpuSamples.read(dir.resolve("cpu-fieldline.txt"), ticks),
              List.of("server")));
    }
    JsonNode cluster = BenchReport.readJson(dir.resolve("cluster-summary.json"));
    if (cluster != null) {
      int nodes = Integer.parseInt(meta.getProperty("clusterNodes", "2"));
      List<String> servers = new ArrayList<>();
      for (int i = 1; i <= nodes; i++) {
        servers.add("node-" + i);
      }
      phases.add(
          new Phase(
              nodes + "-node cluster, devices on node 2, WebSocket on node 1",
              cluster,
              CpuSamples.read(dir.resolve("cpu-cluster.txt"), ticks),
              servers));
    }
  }

  public static void main(String[] args) throws IOException {
    CommandLine line = CommandLine.parse(args);
    BenchReport.output(
        new LiveReport(Path.of(line.get("run-dir"))).render(), line.optional("append"));
  }

  String render() {
    StringBuilder md = new StringBuilder();
    BenchReport.heading(md, meta);
    md.append(
        "- Windows by the message's timestamp, counted from the first connection attempt: cold ="
            + " the first COLD seconds (fresh server: JIT, first look-ups, the subscriptions"
            + " opening), warm = the rest. publish → update = the update's arrival (Gatling stamps"
            + " the WebSocket frame) − the message's timestamp (Gatling's clock as it was built);"
            + " PUBACK → update = arrival − that message's own PUBACK; both 1 ms resolution. A"
            + " subscription's first update (current values) is not timed; every acknowledged"
            + " message newer than it is expected as an update\n");
    md.append("- Gatling reports: `").append(meta.getProperty("runDir")).append("/gatling-*`\n\n");
    if (phases.isEmpty()) {
      return md.append("No phase produced a summary.\n").toString();
    }
    md.append("|");
    for (Phase phase : phases) {
      md.append(" | ").append(phase.title());
    }
    md.append(" |\n| ---");
    phases.forEach(p -> md.append(" | ---:"));
    md.append(" |\n");
    row(md, "devices connected / MQTT requests failed (connect, publish)", LiveReport::devices);
    row(md, "messages / s offered / acknowledged, warm", LiveReport::rates);
    row(
        md,
        "WebSocket sessions × subscriptions; first update received / error updates",
        this::subs);
    row(md, "subscribe → first update p50 / max ms", LiveReport::firstUpdate);
    row(md, "updates expected / received / lost, whole run", p -> counts(live(p)));
    row(md, "updates expected / received / lost, cold", p -> counts(window(p, "cold")));
    row(md, "updates expected / received / lost, warm", p -> counts(window(p, "warm")));
    row(
        md,
        "subscriptions that lost updates; when (lost messages' ts, s from start)",
        LiveReport::losers);
    row(md, "publish → update p50 / p90 / p99 / p99.9 / max ms, cold", p -> update(p, "cold"));
    row(md, "publish → update p50 / p90 / p99 / p99.9 / max ms, warm", p -> update(p, "warm"));
    row(md, "PUBACK p50 / p90 / p99 / p99.9 / max ms (all devices), cold", p -> puback(p, "cold"));
    row(md, "PUBACK p50 / p90 / p99 / p99.9 / max ms (all devices), warm", p -> puback(p, "warm"));
    row(
        md,
        "PUBACK → update, same message, p50 / p90 / p99 / p99.9 / max ms, cold",
        p -> after(p, "cold"));
    row(
        md,
        "PUBACK → update, same message, p50 / p90 / p99 / p99.9 / max ms, warm",
        p -> after(p, "warm"));
    row(md, "updates ahead of their own PUBACK (counted as 0), cold / warm", LiveReport::ahead);
    row(
        md,
        "target: warm p99 ≤ 50 ms on top of the PUBACK, 0 lost over the whole run",
        LiveReport::target);
    row(md, "CPU cores, cold: server(s) / Cassandra / generator / machine", p -> cpu(p, "cold"));
    row(md, "CPU cores, warm: server(s) / Cassandra / generator / machine", p -> cpu(p, "warm"));
    row(md, "max RSS MiB: server(s)", this::rss);
    return md.toString();
  }

  private void row(StringBuilder md, String label, Function<Phase, String> cell) {
    md.append("| ").append(label);
    for (Phase phase : phases) {
      md.append(" | ").append(cell.apply(phase));
    }
    md.append(" |\n");
  }

  private static JsonNode live(Phase phase) {
    return phase.json().path("liveUpdates");
  }

  private static JsonNode window(Phase phase, String name) {
    return live(phase).path("windows").path(name);
  }

  private static String devices(Phase phase) {
    long failed = 0;
    for (JsonNode count : phase.json().path("failures")) {
      failed += count.asLong();
    }
    return phase.json().path("connects").asLong() + " / " + failed;
  }

  private static String rates(Phase phase) {
    return fmt(phase.json().path("offeredPerSecond"), 0)
        + " / "
        + fmt(phase.json().path("steadyAckedPerSecond"), 1);
  }

  private String subs(Phase phase) {
    JsonNode settings = phase.json().path("live");
    return settings.path("wsSessions").asLong()
        + " × "
        + fmt(settings.path("subscriptions").asDouble() / settings.path("wsSessions").asDouble(), 0)
        + "; "
        + live(phase).path("subscriptionsStarted").asLong()
        + " / "
        + live(phase).path("errors").asLong();
  }

  private static String firstUpdate(Phase phase) {
    JsonNode first = live(phase).path("firstUpdateMillis");
    if (first.path("count").asLong() == 0) {
      return "-";
    }
    return fmt(first.path("p50"), 0) + " / " + fmt(first.path("max"), 0);
  }

  private static String counts(JsonNode node) {
    if (node.isMissingNode()) {
      return "-";
    }
    return node.path("expected").asLong()
        + " / "
        + node.path("receivedExpected").asLong()
        + " / "
        + node.path("lost").asLong();
  }

  private static String losers(Phase phase) {
    JsonNode losers = live(phase).path("lostBySubscription");
    if (losers.isEmpty()) {
      return "0";
    }
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (JsonNode loser : losers) {
      first = Math.min(first, loser.path("firstLostMillis").asLong());
      last = Math.max(last, loser.path("lastLostMillis").asLong());
    }
    return losers.size()
        + " of "
        + phase.json().path("live").path("subscriptions").asLong()
        + "; "
        + fmt(first / 1000.0, 1)
        + "–"
        + fmt(last / 1000.0, 1)
        + " s";
  }

  private static String update(Phase phase, String window) {
    return percentiles(window(phase, window).path("updateLatencyMillis"));
  }

  private static String after(Phase phase, String window) {
    return percentiles(window(phase, window).path("afterAckMillis"));
  }

  private static String puback(Phase phase, String window) {
    return percentiles(phase.json().path("windows").path(window).path("ackLatencyMillis"));
  }

  private static String ahead(Phase phase) {
    return window(phase, "cold").path("beforeAck").asLong()
        + " / "
        + window(phase, "warm").path("beforeAck").asLong();
  }

  private static String percentiles(JsonNode node) {
    if (node.path("count").asLong() == 0) {
      return "-";
    }
    return fmt(node.path("p50"), 1)
        + " / "
        + fmt(node.path("p90"), 1)
        + " / "
        + fmt(node.path("p99"), 1)
        + " / "
        + fmt(node.path("p999"), 1)
        + " / "
        + fmt(node.path("max"), 1);
  }

  /**
   * Met when, over the warm window, the p99 of PUBACK → update (each update against its own
   * message's PUBACK) and publish → update p99 − PUBACK p99 are both at most 50 ms, and no update
   * was lost over the whole run.
   */
  private static String target(Phase phase) {
    JsonNode after = window(phase, "warm").path("afterAckMillis");
    JsonNode update = window(phase, "warm").path("updateLatencyMillis");
    JsonNode puback = phase.json().path("windows").path("warm").path("ackLatencyMillis");
    long lost = live(phase).path("lost").asLong();
    List<String> misses = new ArrayList<>();
    List<String> figures = new ArrayList<>();
    if (after.path("count").asLong() == 0 || puback.path("count").asLong() == 0) {
      misses.add("no update in the warm window");
    } else {
      double perMessage = after.path("p99").asDouble();
      double onTop = update.path("p99").asDouble() - puback.path("p99").asDouble();
      figures.add("PUBACK → update p99 " + fmt(perMessage, 1) + " ms");
      figures.add("update p99 − PUBACK p99 " + fmt(onTop, 1) + " ms");
      if (perMessage > TARGET_ON_TOP_MILLIS) {
        misses.add("PUBACK → update p99 " + fmt(perMessage - TARGET_ON_TOP_MILLIS, 1) + " ms over");
      }
      if (onTop > TARGET_ON_TOP_MILLIS) {
        misses.add("update p99 − PUBACK p99 " + fmt(onTop - TARGET_ON_TOP_MILLIS, 1) + " ms over");
      }
    }
    if (lost > 0) {
      misses.add(lost + " lost");
    }
    String verdict = misses.isEmpty() ? "met" : "missed: " + String.join(", ", misses);
    return figures.isEmpty() ? verdict : verdict + " (" + String.join("; ", figures) + ")";
  }

  private String cpu(Phase phase, String window) {
    JsonNode seconds = window(phase, window).path("seconds");
    long start = phase.json().path("startEpochMillis").asLong();
    if (seconds.size() != 2 || start == 0) {
      return "-";
    }
    long from = start + seconds.get(0).asLong() * 1000;
    long to = start + seconds.get(1).asLong() * 1000;
    List<String> servers = new ArrayList<>();
    for (String server : phase.servers()) {
      servers.add(fmt(phase.cpu().cores(server, from, to), 2));
    }
    return String.join(" + ", servers)
        + " / "
        + fmt(phase.cpu().cores("cassandra", from, to), 2)
        + " / "
        + fmt(phase.cpu().cores("generator", from, to), 2)
        + " / "
        + fmt(phase.cpu().cores("machine", from, to), 2);
  }

  private String rss(Phase phase) {
    List<String> servers = new ArrayList<>();
    for (String server : phase.servers()) {
      servers.add(fmt(phase.cpu().maxRssMib(server), 0));
    }
    return String.join(" + ", servers);
  }

  private static String fmt(JsonNode value, int decimals) {
    return value.isNumber() ? fmt(value.asDouble(), decimals) : "-";
  }

  private static String fmt(double value, int decimals) {
    return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%,." + decimals + "f", value);
  }
}
