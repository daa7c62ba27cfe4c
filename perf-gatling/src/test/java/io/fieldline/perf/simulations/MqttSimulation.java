package io.fieldline.perf.simulations;

import static io.fieldline.perf.mqtt.MqttDsl.mqtt;

import io.fieldline.perf.mqtt.MqttProtocolBuilder;
import io.fieldline.perf.mqtt.MqttRunStats;
import io.fieldline.perf.mqtt.MqttTls;
import io.fieldline.perf.telemetry.TelemetryPayload;
import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.CoreDsl;
import io.gatling.javaapi.core.FeederBuilder;
import io.gatling.javaapi.core.Simulation;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What every Fieldline simulation shares: settings from system properties, the protocol (over TLS
 * when {@code tlsCa} is set), the token feeder, the ThingsBoard payload, the connect/publish steps,
 * and {@link #after()} writing the run's summary and acknowledgement ledger for bench/run.sh and
 * GatlingSmokeIT.
 */
abstract class MqttSimulation extends Simulation {

  static final String TELEMETRY_TOPIC = "v1/devices/me/telemetry";

  final SimulationSettings settings = SimulationSettings.fromSystemProperties();
  final MqttRunStats stats = newStats();
  final TelemetryPayload payload = new TelemetryPayload(settings.keys());
  final MqttProtocolBuilder protocol =
      withTls(
          mqtt()
              .host(settings.host())
              .ports(settings.ports())
              .keepAlive(settings.keepAlive())
              .cleanSession(true)
              .ackTimeout(settings.ackTimeout())
              .clientIdPrefix(getClass().getSimpleName() + "-")
              .sourceAddresses(settings.sourceAddresses())
              .stats(stats));

  private MqttProtocolBuilder withTls(MqttProtocolBuilder plain) {
    Path ca = settings.tlsCa();
    return ca == null ? plain : plain.tls(MqttTls.trusting(ca, settings.tlsProvider()));
  }

  private MqttRunStats newStats() {
    MqttRunStats runStats = new MqttRunStats();
    int[] window = steadyWindowSeconds();
    runStats.steadyWindow(window[0], window[1]);
    namedWindows().forEach((name, seconds) -> runStats.window(name, seconds[0], seconds[1]));
    return runStats;
  }

  /** One record per device; a run with more devices than records fails at once. */
  FeederBuilder<String> tokens() {
    return CoreDsl.csv(settings.feeder().toAbsolutePath().toString()).queue();
  }

  ChainBuilder connect() {
    return CoreDsl.exec(mqtt("connect").connect().username("#{token}")).exitHereIfFailed();
  }

  ChainBuilder publish() {
    return CoreDsl.exec(
        mqtt("publish telemetry").publish(TELEMETRY_TOPIC).qos(settings.qos()).payload(payload));
  }

  ChainBuilder disconnect() {
    return CoreDsl.exec(mqtt("disconnect").disconnect());
  }

  /** Seconds (from the first connection) over which rates, CPU and steady latency are taken. */
  int[] steadyWindowSeconds() {
    return settings.steadyWindow();
  }

  /**
   * Windows with latency figures of their own (name → seconds {@code [from, to)} from the first
   * connection), reported next to the steady window; none by default. Called during construction:
   * may read {@link #settings} only.
   */
  Map<String, int[]> namedWindows() {
    return Map.of();
  }

  /**
   * What the scenario adds to the run's summary; nothing by default. Called in {@link #after()}.
   */
  Map<String, Object> summaryExtra() {
    return Map.of();
  }

  /** What the scenario offers in messages per second (0 for a closed loop). */
  abstract double offeredPerSecond();

  @Override
  public void after() {
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("simulation", getClass().getSimpleName());
    extra.putAll(settings.describe());
    extra.put("offeredPerSecond", offeredPerSecond());
    int[] window = steadyWindowSeconds();
    extra.put("steadyWindowSeconds", List.of(window[0], window[1]));
    extra.put("steadyAckedPerSecond", stats.meanAckedPerSecond(window[0], window[1]));
    extra.putAll(summaryExtra());
    Path summary = settings.summary();
    if (summary != null) {
      stats.writeSummary(summary, extra);
    }
    Path ledger = settings.ledger();
    if (ledger != null) {
      stats.writeLedger(ledger);
    }
    System.out.printf(
        "%s: connects=%d sent=%d acked=%d failed=%d%n",
        getClass().getSimpleName(),
        stats.connectCount(),
        stats.sentCount(),
        stats.ackedCount(),
        stats.failureCount());
  }
}
