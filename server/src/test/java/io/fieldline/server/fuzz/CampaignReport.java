package io.fieldline.server.fuzz;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The figures of one campaign, for the assertions and for docs/fuzzing.md: the server's counters
 * before and after ({@code fieldline_mqtt_rejected_total} by reason, PUBACKs, publishes, dead
 * letters, CONNECTs by result), the heap after GC before, during and after, probe and bystander
 * latencies, and the last lanes sent (their bytes are the reproducer when something breaks).
 * Written to {@code target/fuzz/MqttFuzzIT.txt} and logged. Thread-safe.
 */
final class CampaignReport {

  private static final Logger LOG = LoggerFactory.getLogger(CampaignReport.class);
  private static final Path FILE = Path.of("target", "fuzz", "MqttFuzzIT.txt");
  private static final int RECENT = 8;
  private static final int SHOWN_BYTES = 2048;
  private static final List<String> COUNTERS =
      List.of(
          "fieldline_mqtt_rejected_total",
          "fieldline_mqtt_connects_total",
          "fieldline_mqtt_publish_received_total",
          "fieldline_mqtt_puback_sent_total",
          "fieldline_mqtt_pubrec_sent_total",
          "fieldline_mqtt_deadletters_total",
          "fieldline_mqtt_write_failures_total",
          "fieldline_mqtt_backpressure_pauses_total");

  private final LiveServer server;
  private final CampaignStats stats;
  private final Map<String, Double> before;
  private long heapBefore;
  private final List<String> heapSamples = new ArrayList<>();
  private final Deque<String> recent = new ArrayDeque<>();
  private final List<String> lines = new ArrayList<>();
  private long probes;
  private Duration slowestProbe = Duration.ZERO;
  private double seconds;

  CampaignReport(LiveServer server, CampaignStats stats) {
    this.server = server;
    this.stats = stats;
    this.before = counters();
  }

  /**
   * The campaign's first execution: the heap is measured now, with the server, the bystander and
   * Jazzer (its agent, hooks and instrumented classes) all in place.
   */
  synchronized void start() {
    heapBefore = heapAfterGc();
  }

  /** The heap in use right after a full collection, in bytes. */
  static long heapAfterGc() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  synchronized long heapBefore() {
    return heapBefore;
  }

  synchronized void sampleHeap() {
    heapSamples.add(
        String.format(
            Locale.ROOT,
            "%.0f s: %d fuzzed packets, %d MB",
            stats.seconds(),
            stats.get("fuzzed"),
            heapAfterGc() >> 20));
  }

  synchronized void probed(Duration took) {
    probes++;
    if (took.compareTo(slowestProbe) > 0) {
      slowestProbe = took;
    }
  }

  /** Keeps the lanes of the latest execution among the recent ones. */
  synchronized void remember(List<LaneRunner.Result> results) {
    for (LaneRunner.Result result : results) {
      recent.addLast(result.outcome() + " " + describe(result.lane()));
      if (recent.size() > RECENT) {
        recent.removeFirst();
      }
    }
  }

  synchronized String recentLanes() {
    return String.join("\n", recent);
  }

  /** A lane in one line: where it went, how it was cut, and its bytes in hex. */
  static String describe(Lane lane) {
    byte[] bytes = lane.bytes();
    String hex = HexFormat.of().formatHex(bytes, 0, Math.min(bytes.length, SHOWN_BYTES));
    return String.format(
        Locale.ROOT,
        "MQTT %s on %s, %d packets, framed %s, chunk %d, %d bytes: %s%s",
        lane.version().label(),
        lane.listener(),
        lane.packets(),
        lane.framed(),
        lane.chunk(),
        bytes.length,
        hex,
        bytes.length > SHOWN_BYTES ? "…" : "");
  }

  synchronized void fuzzingOver(boolean fuzzing) {
    seconds = stats.seconds();
    Map<String, Long> counted = stats.snapshot();
    lines.add(
        "mode: "
            + (fuzzing ? "fuzzing" : "regression (inputs directory only)")
            + "; Jazzer's corpus, findings and reproducers: "
            + System.getProperty("jazzer.internal.basedir"));
    lines.add(
        String.format(
            Locale.ROOT,
            "duration: %.0f s; executions %d; lanes (connections) %d; packets %d, of them fuzzed %d"
                + " (%.0f/s)",
            seconds,
            counted.getOrDefault("executions", 0L),
            counted.getOrDefault("lanes", 0L),
            counted.getOrDefault("packets", 0L),
            counted.getOrDefault("fuzzed", 0L),
            counted.getOrDefault("fuzzed", 0L) / Math.max(1, seconds)));
    counted.forEach((name, value) -> lines.add("  " + name + " = " + value));
    lines.add("server counters, increase over the campaign:");
    Map<String, Double> after = counters();
    after.forEach(
        (name, value) -> {
          double increase = value - before.getOrDefault(name, 0.0);
          if (increase != 0) {
            lines.add(String.format(Locale.ROOT, "  %s + %.0f", name, increase));
          }
        });
    lines.add(
        String.format(
            Locale.ROOT,
            "watchdog probes: %d, slowest %d ms (CONNECT + PINGREQ on a new connection)",
            probes,
            slowestProbe.toMillis()));
  }

  synchronized void bystander(PublishingBystander bystander) {
    lines.add(
        String.format(
            Locale.ROOT,
            "bystander: %d QoS 1 messages acknowledged and stored; PUBACK p50 %d ms, p99 %d ms,"
                + " max %d ms",
            bystander.acknowledged(),
            bystander.latency(0.5).toMillis(),
            bystander.latency(0.99).toMillis(),
            bystander.latency(1).toMillis()));
  }

  synchronized void finalProbes(List<Duration> probes) {
    lines.add(
        String.format(
            Locale.ROOT,
            "final probes: %d (plain and TLS, every event loop twice), slowest %d ms",
            probes.size(),
            Collections.max(probes).toMillis()));
  }

  /** How much {@code fieldline_mqtt_rejected_total{reason}} grew since the campaign began. */
  double rejectedSinceStart(String reason) {
    return increase("fieldline_mqtt_rejected_total{reason=\"" + reason + "\"");
  }

  /** How much the server's meters whose lines start with {@code prefix} grew. */
  double increase(String prefix) {
    double was =
        before.entrySet().stream()
            .filter(e -> e.getKey().startsWith(prefix))
            .mapToDouble(Map.Entry::getValue)
            .sum();
    return server.metric(prefix) - was;
  }

  synchronized void write(long heapAfter, LogEvents logEvents) throws IOException {
    lines.add(
        String.format(
            Locale.ROOT,
            "heap after GC: before %d MB, after %d MB",
            heapBefore >> 20,
            heapAfter >> 20));
    heapSamples.forEach(sample -> lines.add("  " + sample));
    lines.add(
        "Netty leak detection: "
            + System.getProperty("io.netty.leakDetection.level", "simple (default)")
            + "; jazzer.max_duration "
            + System.getProperty("jazzer.max_duration", "@FuzzTest(maxDuration)"));
    lines.add(
        "log events: " + logEvents.errors() + " at ERROR, " + logEvents.warnings() + " at WARN");
    lines.add(
        String.format(
            Locale.ROOT,
            "machine: %d cores, %s %s, %s %s",
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.vm.name"),
            System.getProperty("java.version"),
            System.getProperty("os.name"),
            System.getProperty("os.version")));
    Files.createDirectories(FILE.getParent());
    Files.write(FILE, lines);
    LOG.info("fuzz campaign:\n{}", String.join("\n", lines));
  }

  private Map<String, Double> counters() {
    Map<String, Double> all = new TreeMap<>();
    for (String counter : COUNTERS) {
      all.putAll(server.samples(counter));
    }
    return all;
  }
}
