package io.fieldline.perf.report;

import static io.fieldline.perf.report.BenchReport.counts;
import static io.fieldline.perf.report.BenchReport.fmt;
import static io.fieldline.perf.report.BenchReport.latencyOf;
import static io.fieldline.perf.report.BenchReport.row;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * The sections of the {@link BenchReport} that only some scenarios have: ColdStart's cold and warm
 * windows, and the reconnect storm's recovery table. Each renders nothing when its scenario did not
 * run. Stateless.
 */
final class ScenarioSections {

  private ScenarioSections() {}

  /**
   * ColdStart: Fieldline's first window ({@code cold}, from the first connection attempt, nothing
   * left out) next to the following one ({@code warm}).
   */
  static void coldStart(StringBuilder md, @Nullable PhaseResult fieldline, Properties meta) {
    if (fieldline == null) {
      return;
    }
    PhaseResult cold = fieldline.window("cold");
    PhaseResult warm = fieldline.window("warm");
    if (cold == null || warm == null) {
      return;
    }
    md.append(
        "\nCold start: Fieldline started on a fresh data directory (cold JVM, cold Cassandra);");
    md.append(" windows counted from the first connection attempt, nothing left out.\n\n");
    long ready = Long.parseLong(meta.getProperty("readyEpochMillis", "0"));
    if (ready > 0) {
      md.append("- /health/ready → first connection attempt: ")
          .append(fmt((fieldline.json().path("startEpochMillis").asLong() - ready) / 1000.0, 1))
          .append(" s (device provisioning; the load generator was already waiting)\n\n");
    }
    md.append("| | cold: ")
        .append(seconds(cold))
        .append(" | warm: ")
        .append(seconds(warm))
        .append(" |\n| --- | ---: | ---: |\n");
    row(md, "msgs/s achieved ÷ offered", achievedOverOffered(cold), achievedOverOffered(warm));
    row(
        md,
        "connects (CONNACKs) in the window",
        fmt(cold.sumOver("connectedPerSecond"), 0),
        fmt(warm.sumOver("connectedPerSecond"), 0));
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms",
        windowLatency(fieldline, "cold"),
        windowLatency(fieldline, "warm"));
    row(
        md,
        "CPU cores: server / Cassandra",
        fmt(cold.cores("server"), 2) + " / " + fmt(cold.cores("cassandra"), 2),
        fmt(warm.cores("server"), 2) + " / " + fmt(warm.cores("cassandra"), 2));
    row(
        md,
        "CPU µs per message, server + Cassandra (connects included)",
        fmt(cold.cpuMicrosPerUnit("server", "cassandra"), 0),
        fmt(warm.cpuMicrosPerUnit("server", "cassandra"), 0));
    row(
        md,
        "CPU µs per message, load generator",
        fmt(cold.cpuMicrosPerUnit("generator"), 0),
        fmt(warm.cpuMicrosPerUnit("generator"), 0));
  }

  private static String seconds(PhaseResult window) {
    long start = window.json().path("startEpochMillis").asLong();
    return "seconds "
        + (window.fromMillis() - start) / 1000
        + "–"
        + (window.toMillis() - start) / 1000;
  }

  private static String achievedOverOffered(PhaseResult window) {
    double offered = window.json().path("offeredPerSecond").asDouble();
    return fmt(window.rate(), 0)
        + " ÷ "
        + fmt(offered, 0)
        + " = "
        + (offered > 0 ? fmt(window.rate() / offered, 3) : "-");
  }

  private static String windowLatency(PhaseResult phase, String window) {
    JsonNode millis = phase.windowJson(window).path("ackLatencyMillis");
    return millis.path("count").asLong() == 0 ? "-" : latencyOf(millis);
  }

  /**
   * Runs whose summary gives {@code pointsPerMessage} (GatewayFleet: one point per child;
   * ColdStart: 1): the {@code cold}, {@code warm} and {@code run} windows in points, a point being
   * one device's values at one timestamp (its {@code keys} values are {@code keys} rows of ts_kv).
   * CPU per point and points per second per core are of the server and Cassandra together.
   */
  static void points(
      StringBuilder md, @Nullable PhaseResult fieldline, @Nullable JsonNode check, int keys) {
    if (fieldline == null || !fieldline.json().has("pointsPerMessage")) {
      return;
    }
    int perMessage = fieldline.json().path("pointsPerMessage").asInt();
    String[] names = {"cold", "warm", "run"};
    PhaseResult[] windows = new PhaseResult[names.length];
    for (int i = 0; i < names.length; i++) {
      windows[i] = fieldline.window(names[i]);
      if (windows[i] == null) {
        return;
      }
    }
    md.append("\nPoints (")
        .append(perMessage)
        .append(perMessage == 1 ? " point per message" : " points per message, one per child")
        .append(", ")
        .append(keys)
        .append(" values each); CPU of the server and Cassandra:\n\n");
    md.append("| | cold: ")
        .append(seconds(windows[0]))
        .append(" | warm (steady): ")
        .append(seconds(windows[1]))
        .append(" | whole run: ")
        .append(seconds(windows[2]))
        .append(" |\n| --- | ---: | ---: | ---: |\n");
    String[] cells = new String[names.length];
    for (int i = 0; i < names.length; i++) {
      cells[i] = achievedOverOffered(windows[i]);
    }
    row(md, "messages/s acknowledged ÷ offered", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] = fmt(windows[i].rate() * perMessage, 0);
    }
    row(md, "**persisted points/s** (acknowledged messages × points per message)", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] = fmt(windows[i].rate() * perMessage * keys, 0);
    }
    row(md, "values (ts_kv rows)/s", cells);
    for (int i = 0; i < names.length; i++) {
      JsonNode millis = fieldline.windowJson(names[i]).path("ackLatencyMillis");
      cells[i] =
          millis.path("count").asLong() == 0
              ? "-"
              : fmt(millis.path("p50").asDouble(), 1)
                  + " / "
                  + fmt(millis.path("p99").asDouble(), 1)
                  + " / "
                  + fmt(millis.path("max").asDouble(), 0);
    }
    row(md, "PUBACK p50 / p99 / max ms", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] =
          fmt(windows[i].cores("server"), 2)
              + " / "
              + fmt(windows[i].cores("cassandra"), 2)
              + " / "
              + fmt(windows[i].cores("generator"), 2)
              + " / "
              + BenchReport.others(windows[i]);
    }
    row(md, "CPU cores: server / Cassandra / load generator / other processes", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] = fmt(windows[i].cpuMicrosPerUnit("server", "cassandra") / perMessage, 1);
    }
    row(md, "**CPU µs per persisted point** (server + Cassandra)", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] = fmt(1e6 * perMessage / windows[i].cpuMicrosPerUnit("server", "cassandra"), 0);
    }
    row(md, "**points/s per core used** (server + Cassandra)", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] = fmt(windows[i].cpuMicrosPerUnit("server") / perMessage, 1);
    }
    row(md, "CPU µs per point: server alone", cells);
    for (int i = 0; i < names.length; i++) {
      cells[i] = fmt(windows[i].cpuMicrosPerUnit("generator") / perMessage, 1);
    }
    row(md, "CPU µs per point: load generator", cells);
    if (check != null && "points".equals(check.path("unit").asText())) {
      md.append("\nChildren found over REST (`GET /api/tenant/devices?deviceName=`): ")
          .append(check.path("childrenFound").asLong())
          .append(" of ")
          .append(check.path("childrenExpected").asLong())
          .append("; acknowledged gateway messages ")
          .append(check.path("messagesAcked").asLong())
          .append(" = ")
          .append(check.path("acked").asLong())
          .append(" points, of which stored ")
          .append(check.path("storedAcked").asLong())
          .append(", missing ")
          .append(check.path("missing").asLong())
          .append(", partly stored ")
          .append(check.path("partial").asLong())
          .append(".\n");
    }
  }

  /** ConnectionStorm storm=reconnect: recovery after every socket was dropped at once. */
  static void reconnectStorm(
      StringBuilder md,
      @Nullable PhaseResult fieldline,
      @Nullable PhaseResult mosquitto,
      @Nullable PhaseResult hivemq,
      String fieldlineStored) {
    PhaseResult any = fieldline != null ? fieldline : mosquitto != null ? mosquitto : hivemq;
    if (any == null || !"reconnect".equals(any.json().path("storm").asText())) {
      return;
    }
    md.append("\nReconnect storm: every socket closed at once without DISCONNECT, every device")
        .append(" reconnecting at once (retried each second while refused):\n\n");
    md.append("| | Fieldline | Mosquitto | HiveMQ CE |\n| --- | ---: | ---: | ---: |\n");
    row(md, "connections dropped", drops(fieldline), drops(mosquitto), drops(hivemq));
    row(
        md,
        "devices publishing again (first PUBACK after the drop) / devices",
        resumed(fieldline),
        resumed(mosquitto),
        resumed(hivemq));
    row(
        md,
        "time until every device publishes again (max of drop → first PUBACK), ms",
        resumeField(fieldline, "max"),
        resumeField(mosquitto, "max"),
        resumeField(hivemq, "max"));
    row(
        md,
        "drop → first PUBACK p50 / p95 / p99 ms",
        resumePercentiles(fieldline),
        resumePercentiles(mosquitto),
        resumePercentiles(hivemq));
    row(
        md,
        "CONNACK refusals by return code",
        refusals(fieldline),
        refusals(mosquitto),
        refusals(hivemq));
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms, before the drop",
        windowLatencyOf(fieldline, "beforeDrop"),
        windowLatencyOf(mosquitto, "beforeDrop"),
        windowLatencyOf(hivemq, "beforeDrop"));
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms, after the drop",
        windowLatencyOf(fieldline, "afterDrop"),
        windowLatencyOf(mosquitto, "afterDrop"),
        windowLatencyOf(hivemq, "afterDrop"));
    row(
        md,
        "requests sent / acked / KO (whole run)",
        counts(fieldline),
        counts(mosquitto),
        counts(hivemq));
    row(
        md,
        "acked / stored / missing (partial), whole run",
        fieldlineStored,
        mosquitto == null ? "-" : "nothing stored",
        hivemq == null ? "-" : "nothing stored");
  }

  private static String drops(@Nullable PhaseResult phase) {
    return phase == null ? "-" : Long.toString(phase.json().path("drops").asLong());
  }

  private static String resumed(@Nullable PhaseResult phase) {
    return phase == null
        ? "-"
        : phase.json().path("resumeAfterDropMillis").path("count").asLong()
            + " / "
            + phase.json().path("devices").asLong();
  }

  private static String resumeField(@Nullable PhaseResult phase, String field) {
    if (phase == null || phase.json().path("resumeAfterDropMillis").path("count").asLong() == 0) {
      return "-";
    }
    return fmt(phase.json().path("resumeAfterDropMillis").path(field).asDouble(), 0);
  }

  private static String resumePercentiles(@Nullable PhaseResult phase) {
    return resumeField(phase, "p50")
        + " / "
        + resumeField(phase, "p95")
        + " / "
        + resumeField(phase, "p99");
  }

  /** Refused CONNACKs by code, 0x03 (server unavailable) always shown. */
  static String refusals(@Nullable PhaseResult phase) {
    if (phase == null) {
      return "-";
    }
    JsonNode codes = phase.json().path("connackRefusals");
    StringBuilder out = new StringBuilder("0x03: ").append(codes.path("0x03").asLong());
    for (Map.Entry<String, JsonNode> code : codes.properties()) {
      if (!code.getKey().equals("0x03")) {
        out.append(", ").append(code.getKey()).append(": ").append(code.getValue().asLong());
      }
    }
    return out.toString();
  }

  private static String windowLatencyOf(@Nullable PhaseResult phase, String window) {
    return phase == null ? "-" : windowLatency(phase, window);
  }
}
