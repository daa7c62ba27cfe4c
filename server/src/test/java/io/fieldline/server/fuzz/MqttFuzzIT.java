package io.fieldline.server.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.api.Jazzer;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fieldline.common.device.Device;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Bad input at scale (issue 13): Jazzer (coverage-guided, in-process) mutates MQTT 3.1.1 and MQTT 5
 * packets (3.1 now and then) and sends them over real sockets, plain and TLS, to a live server.
 * Each execution is up to four connections side by side, most of them a device's valid CONNECT
 * followed by fuzzed packets, all pipelined, then a PINGREQ ({@link Lane}). While it runs, a
 * bystander device publishes QoS 1 and every message must be acknowledged within a bound, a probe
 * connects every second ({@link Watchdog}), nothing may be logged at ERROR ({@link LogEvents}), the
 * server may send nothing a server must not, and every lane whose lengths frame must be answered or
 * closed within the bound ({@link LaneRunner}); a breach is a finding, with the lanes' bytes in its
 * message. Afterwards every event loop must answer on both listeners, no fuzz connection may be
 * left open, the heap after GC may not have grown beyond a bound, and every acknowledged bystander
 * message must be stored. Figures go to {@code target/fuzz/MqttFuzzIT.txt}.
 *
 * <p>{@code mvn verify} fuzzes for {@link #SHORT_RUN}; {@code bench/fuzz.sh} runs the same class
 * for longer ({@code -Djazzer.max_duration}, {@code -Dfieldline.fuzz.min-packets}); docs/fuzzing.md
 * has the campaign and its figures. {@code JAZZER_FUZZ=0} replays the inputs directory only.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MqttFuzzIT {

  static final String SHORT_RUN = "12s";

  private static final int LANES = 4;
  private static final int MAX_PACKETS = 24;
  private static final int WORKER_THREADS = 4;
  private static final Set<String> LOOPBACK = Set.of("127.0.0.1", "localhost");
  private static final long MIN_PACKETS = Long.getLong("fieldline.fuzz.min-packets", 2_000);
  private static final long HEAP_GROWTH_MB = Long.getLong("fieldline.fuzz.heap-growth-mb", 64);
  private static final Duration BOUND =
      Duration.ofSeconds(Long.getLong("fieldline.fuzz.bound-seconds", 10));
  // How long a lane that does not frame waits for an answer before it shuts its output.
  private static final Duration QUIET = Duration.ofMillis(100);

  private final List<String> laneTokens = new ArrayList<>();
  private LiveServer server;
  private LogEvents logEvents;
  private Device bystanderDevice;
  private PublishingBystander bystander;
  private String probeToken;
  private LaneRunner runner;
  private Watchdog watchdog;
  private CampaignReport report;
  private final CampaignStats stats = new CampaignStats();

  @BeforeAll
  void startServerAndBystander() throws Exception {
    JazzerSettings.applyDefaults();
    logEvents = LogEvents.count();
    server =
        LiveServer.start(
            Map.of(
                "fieldline.mqtt.worker-threads", WORKER_THREADS,
                // All fuzz traffic comes from 127.0.0.1: the per-address budgets (PreAuthLimitsIT
                // covers them) would soon refuse every connection, valid CONNECTs included.
                "fieldline.mqtt.per-address-connection-rate", 0,
                "fieldline.mqtt.per-address-failed-auth-burst", 0));
    for (int i = 0; i < LANES; i++) {
      String token = "fuzz-lane-" + i + "-" + UUID.randomUUID();
      server.createDevice("fuzz-lane-" + i, token);
      laneTokens.add(token);
    }
    probeToken = "fuzz-probe-" + UUID.randomUUID();
    server.createDevice("fuzz-probe", probeToken);
    String bystanderToken = "fuzz-bystander-" + UUID.randomUUID();
    bystanderDevice = server.createDevice("fuzz-bystander", bystanderToken);
    bystander =
        new PublishingBystander(
            server.plain(), "fuzz-bystander", bystanderToken, Duration.ofMillis(50), BOUND);
    bystander.start();
    runner = new LaneRunner(server.plain(), server.tls(), server.clientTls(), QUIET, BOUND);
    report = new CampaignReport(server, stats);
    watchdog = new Watchdog(server, probeToken, BOUND, report);
  }

  @AfterAll
  void stop() throws Exception {
    if (watchdog != null) {
      watchdog.close();
    }
    if (runner != null) {
      runner.close();
    }
    if (bystander != null) {
      bystander.stop();
    }
    if (server != null) {
      server.close();
    }
    if (logEvents != null) {
      logEvents.close();
    }
    // The tests after this one in the JVM may connect anywhere again.
    BugDetectors.allowNetworkConnections();
  }

  // No @Timeout: JUnit would apply it to the whole fuzzing run, not to one execution; every lane
  // is bounded by the runner instead.
  @FuzzTest(maxDuration = SHORT_RUN)
  @Order(1)
  void should_stay_up_and_serve_others_when_packets_are_fuzzed(FuzzedDataProvider data)
      throws InterruptedException {
    allowLoopbackOnly();
    if (watchdog.startOnce()) {
      report.start();
      // Jazzer refuses every connection from the moment fuzzing starts (after the inputs
      // directory has been replayed) until told otherwise; the watchdog's probes connect from
      // their own thread at any time.
      Jazzer.onFuzzTargetReady(MqttFuzzIT::allowLoopbackOnly);
    }
    List<Lane> lanes = new ArrayList<>();
    int count = 1 + data.consumeInt(0, LANES - 1);
    for (int i = 0; i < count; i++) {
      lanes.add(Lane.read(data, "fuzz-lane-" + i, laneTokens.get(i), MAX_PACKETS));
    }
    stats.execution();
    List<LaneRunner.Result> results = runner.run(lanes);
    results.forEach(stats::record);
    report.remember(results);
    for (LaneRunner.Result result : results) {
      switch (result.outcome()) {
        case SILENT, BAD_ANSWER, UNREACHABLE ->
            throw new AssertionError(
                result.outcome()
                    + " ("
                    + result.detail()
                    + "): "
                    + CampaignReport.describe(result.lane()));
        default -> {}
      }
    }
    String broken = brokenSince();
    if (broken != null) {
      throw new AssertionError(broken + "\nrecent lanes:\n" + report.recentLanes());
    }
  }

  @Test
  @Order(2)
  void should_answer_on_every_event_loop_and_keep_the_heap_flat_when_fuzzing_is_over()
      throws Exception {
    watchdog.close();
    assertThat(brokenSince()).isNull();
    report.fuzzingOver(JazzerSettings.fuzzing());

    // The bystander stops; each of its acknowledged messages is stored.
    bystander.stop();
    assertThat(bystander.acknowledged()).isPositive();
    assertThat(server.rows(bystanderDevice)).isEqualTo(bystander.acknowledged());
    report.bystander(bystander);

    // Every fuzz connection is gone: nothing left open or half-authenticated.
    await()
        .atMost(BOUND.multipliedBy(3))
        .untilAsserted(
            () -> {
              assertThat(server.metric("fieldline_mqtt_connections ")).isZero();
              assertThat(server.metric("fieldline_mqtt_connections_unauthenticated")).isZero();
            });

    // Consecutive connections land on consecutive event loops: two rounds of all of them, on
    // each listener.
    List<Duration> probes = new ArrayList<>();
    for (int i = 0; i < 2 * WORKER_THREADS; i++) {
      probes.add(Probe.roundTrip(server.plain(), null, "fuzz-probe", probeToken, BOUND));
      probes.add(
          Probe.roundTrip(server.tls(), server.clientTls(), "fuzz-probe", probeToken, BOUND));
    }
    report.finalProbes(probes);

    long heapAfter = CampaignReport.heapAfterGc();
    report.write(heapAfter, logEvents);
    long heapGrowth = heapAfter - report.heapBefore();
    assertThat(heapGrowth)
        .as("heap after GC grew by %d MB", heapGrowth >> 20)
        .isLessThan(HEAP_GROWTH_MB << 20);
    assertThat(logEvents.errors()).as("events logged at ERROR (see the test's output)").isZero();
    // The campaign did what it is for: both versions on both listeners, bad input classified,
    // and the publish path reached (the bystander publishes QoS 1 only).
    if (JazzerSettings.fuzzing()) {
      assertThat(stats.get("fuzzed")).isGreaterThanOrEqualTo(MIN_PACKETS);
      for (String where : List.of("3.1.1.plain", "3.1.1.tls", "5.plain", "5.tls")) {
        assertThat(stats.get("fuzzed." + where)).as(where).isPositive();
      }
      assertThat(report.rejectedSinceStart("malformed")).isPositive();
      assertThat(report.increase("fieldline_mqtt_publish_received_total{qos=\"0\"")).isPositive();
    }
  }

  /**
   * Jazzer's SSRF detector reports any connection it was not told to expect: the lanes, probes and
   * bystander speak to 127.0.0.1 only.
   */
  private static void allowLoopbackOnly() {
    BugDetectors.allowNetworkConnections((host, port) -> LOOPBACK.contains(host));
  }

  /** What let the campaign down since it started, or null. */
  private String brokenSince() {
    String bystanderFailure = bystander.failure();
    if (bystanderFailure != null) {
      return "bystander: " + bystanderFailure;
    }
    String probeFailure = watchdog.failure();
    if (probeFailure != null) {
      return "probe: " + probeFailure;
    }
    if (logEvents.errors() > 0) {
      return logEvents.errors() + " events logged at ERROR (see the test's output)";
    }
    return null;
  }
}
