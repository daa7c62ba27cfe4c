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
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Renders a bench/run.sh RpcRoundTrip run as a Markdown section of docs/performance.md: for the
 * single node ({@code fieldline-summary.json}) and the cluster with the devices on node 2 and the
 * REST calls on node 1 ({@code cluster-summary.json}), the calls made and lost (by status), the
 * rate answered and the downlink rate (requests the devices received per second), the round trip
 * over the whole run, the first {@code cold} seconds of calls and the rest, CPU per process over
 * the same windows, and the target (p99 ≤ 50 ms, 0 lost) met or missed by how much.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.report.RpcReport --run-dir bench/results/... [--append docs/performance.md]
 * </pre>
 */
public final class RpcReport {

  /** The target of issue #14: p99 round trip at most this, in ms, with nothing lost. */
  static final double TARGET_P99_MILLIS = 50;

  private record Phase(String title, JsonNode json, CpuSamples cpu, List<String> servers) {}

  private final Properties meta = new Properties();
  private final List<Phase> phases = new ArrayList<>();

  RpcReport(Path dir) throws IOException {
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
              nodes + "-node cluster, devices on node 2, REST on node 1",
              cluster,
              CpuSamples.read(dir.resolve("cpu-cluster.txt"), ticks),
              servers));
    }
  }

  public static void main(String[] args) throws IOException {
    CommandLine line = CommandLine.parse(args);
    BenchReport.output(
        new RpcReport(Path.of(line.get("run-dir"))).render(), line.optional("append"));
  }

  String render() {
    StringBuilder md = new StringBuilder();
    BenchReport.heading(md, meta);
    md.append(
        "- Windows, counted from the first call: cold = its first COLD seconds (fresh server JVMs:"
            + " JIT, first look-ups), warm = the rest of the calls. Round trip = HTTP request"
            + " written → answer read, in the caller, µs resolution (Gatling's own report,"
            + " request \"rpc twoway\", has the same at 1 ms)\n");
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
    row(md, "devices connected / MQTT requests failed (connect, subscribe, answer)", this::devices);
    row(md, "calls offered / s", p -> fmt(p.json().path("rpc").path("rpcRate").asDouble(), 0));
    row(md, "calls made / answered 200 with their own echo", this::calls);
    row(md, "lost (by HTTP status; 0 = no answer)", RpcReport::lost);
    row(md, "answered / s, warm", p -> fmt(windows(p).path("warm").path("answeredPerSecond"), 1));
    row(md, "downlink: requests delivered to devices / s, warm", this::downlink);
    row(md, "round trip p50 / p95 / p99 / p99.9 / max ms, all calls", p -> latency(p, null));
    row(md, "round trip p50 / p95 / p99 / p99.9 / max ms, cold", p -> latency(p, "cold"));
    row(md, "round trip p50 / p95 / p99 / p99.9 / max ms, warm", p -> latency(p, "warm"));
    row(md, "target: warm p99 ≤ 50 ms, 0 lost over the whole run", RpcReport::target);
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

  private static JsonNode windows(Phase phase) {
    return phase.json().path("rpcCalls").path("windows");
  }

  private String devices(Phase phase) {
    long failed = 0;
    for (JsonNode count : phase.json().path("failures")) {
      failed += count.asLong();
    }
    return phase.json().path("connects").asLong() + " / " + failed;
  }

  private String calls(Phase phase) {
    JsonNode calls = phase.json().path("rpcCalls");
    return calls.path("calls").asLong() + " / " + calls.path("answered").asLong();
  }

  private static String lost(Phase phase) {
    JsonNode calls = phase.json().path("rpcCalls");
    List<String> statuses = new ArrayList<>();
    for (Map.Entry<String, JsonNode> status : calls.path("statuses").properties()) {
      if (!status.getKey().equals("200")) {
        statuses.add(status.getKey() + ": " + status.getValue().asLong());
      }
    }
    long wrongEcho = calls.path("wrongEcho").asLong();
    if (wrongEcho > 0) {
      statuses.add("200 with a wrong echo: " + wrongEcho);
    }
    String lost = String.valueOf(calls.path("lost").asLong());
    return statuses.isEmpty() ? lost : lost + " (" + String.join(", ", statuses) + ")";
  }

  private String downlink(Phase phase) {
    JsonNode seconds = windows(phase).path("warm").path("seconds");
    JsonNode perSecond = phase.json().path("rpcRequestedPerSecond");
    long offset =
        (phase.json().path("rpcCalls").path("firstCallEpochMillis").asLong()
                - phase.json().path("startEpochMillis").asLong())
            / 1000;
    if (seconds.size() != 2) {
      return "-";
    }
    long from = offset + seconds.get(0).asLong();
    long to = offset + seconds.get(1).asLong();
    double sum = 0;
    for (long s = from; s < to && s < perSecond.size(); s++) {
      sum += perSecond.get((int) s).asDouble();
    }
    JsonNode responder = phase.json().path("rpcResponder");
    return fmt(to > from ? sum / (to - from) : Double.NaN, 1)
        + " (total: "
        + responder.path("requested").asLong()
        + " received, "
        + responder.path("answered").asLong()
        + " answered)";
  }

  private static String latency(Phase phase, @Nullable String window) {
    JsonNode node =
        window == null
            ? phase.json().path("rpcCalls").path("roundTripMillis")
            : windows(phase).path(window).path("roundTripMillis");
    if (node.path("count").asLong() == 0) {
      return "-";
    }
    return fmt(node.path("p50"), 1)
        + " / "
        + fmt(node.path("p95"), 1)
        + " / "
        + fmt(node.path("p99"), 1)
        + " / "
        + fmt(node.path("p999"), 1)
        + " / "
        + fmt(node.path("max"), 1);
  }

  private static String target(Phase phase) {
    JsonNode warm = windows(phase).path("warm").path("roundTripMillis");
    long lost = phase.json().path("rpcCalls").path("lost").asLong();
    List<String> misses = new ArrayList<>();
    double p99 = warm.path("p99").asDouble();
    if (warm.path("count").asLong() == 0) {
      misses.add("no call answered in the warm window");
    } else if (p99 > TARGET_P99_MILLIS) {
      misses.add("p99 " + fmt(p99 - TARGET_P99_MILLIS, 1) + " ms over");
    }
    if (lost > 0) {
      misses.add(lost + " lost");
    }
    return misses.isEmpty() ? "met" : "missed: " + String.join(", ", misses);
  }

  private String cpu(Phase phase, String window) {
    JsonNode seconds = windows(phase).path(window).path("seconds");
    long first = phase.json().path("rpcCalls").path("firstCallEpochMillis").asLong();
    if (seconds.size() != 2 || first == 0) {
      return "-";
    }
    long from = first + seconds.get(0).asLong() * 1000;
    long to = first + seconds.get(1).asLong() * 1000;
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
