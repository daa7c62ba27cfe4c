package io.fieldline.perf.simulations;

import static io.fieldline.perf.mqtt.MqttDsl.mqtt;
import static io.gatling.javaapi.core.CoreDsl.StringBody;
import static io.gatling.javaapi.core.CoreDsl.constantUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.jsonPath;
import static io.gatling.javaapi.core.CoreDsl.nothingFor;
import static io.gatling.javaapi.core.CoreDsl.rampUsers;
import static io.gatling.javaapi.core.CoreDsl.scenario;
import static io.gatling.javaapi.http.HttpDsl.http;
import static io.gatling.javaapi.http.HttpDsl.status;

import io.fieldline.perf.provision.DeviceProvisioner;
import io.fieldline.perf.provision.ProvisionedDevice;
import io.fieldline.perf.rpc.RoundTripStats;
import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Session;
import io.gatling.javaapi.http.HttpProtocolBuilder;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Server-side two-way RPC, round trip: {@code devices} devices connect (at {@code
 * rampConnectionsPerSec}), subscribe to {@code v1/devices/me/rpc/request/+} and answer every
 * request at once ({@code respondToRpc()}); {@code settle} seconds after the last connect a REST
 * caller starts {@code rpcRate} calls per second of {@code POST /api/rpc/twoway/{deviceId}} for
 * {@code duration} seconds (an open model: calls start at that rate whatever the answers do), over
 * the devices round-robin, each with a sequence number in its params that the device's answer must
 * echo ({@code {"ok":true,"n":n,"request":{"method":"echo","params":{"seq":s}}}}).
 *
 * <p>Measured: the round trip of each call (HTTP request written → answer read: REST → RPC service
 * → MQTT PUBLISH → device's answer → HTTP 200), in Gatling's report ("rpc twoway", 1 ms) and in the
 * summary's {@code rpcCalls} (µs), overall and for the first {@code cold} seconds of calls against
 * the rest; calls lost (not 200 with their own echo) by status; the downlink rate (requests the
 * devices received per second, {@code rpcRequestedPerSecond}). A KO (any lost call, any device that
 * failed to connect or subscribe) fails the run's assertion.
 *
 * <p>In a cluster give the devices one node ({@code port}) and the calls another ({@code httpUrl}):
 * every request then crosses the cluster to the device's session and its answer crosses back.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.RpcRoundTrip \
 *   -Dfeeder=devices.csv -Ddevices=1000 -Dport=1883 -DhttpUrl=http://127.0.0.1:8080 \
 *   -DrestUser=admin@fieldline.local -DrestPassword=... -DrpcRate=500 -Dduration=120 -Dcold=60
 * </pre>
 */
public class RpcRoundTrip extends MqttSimulation {

  private final RpcSettings rpc = RpcSettings.fromSystemProperties();
  private final RoundTripStats calls = newCallStats();
  private final AtomicLong sequence = new AtomicLong();

  {
    Duration callsStart = settings.ramp().plus(rpc.settle());
    // Devices stay until the last call has had its answer or its timeout.
    Duration hold =
        callsStart.plus(settings.duration()).plus(rpc.timeout()).plus(Duration.ofSeconds(5));
    ScenarioBuilder devices =
        scenario("rpc devices")
            .feed(tokens())
            .exec(connect())
            .exec(mqtt("rpc subscribe").respondToRpc().qos(rpc.qos()))
            .exitHereIfFailed()
            .pause(hold)
            .exec(disconnect());
    setUp(
            devices
                .injectOpen(rampUsers(settings.devices()).during(settings.ramp()))
                .protocols(protocol),
            caller()
                .injectOpen(
                    nothingFor(callsStart),
                    constantUsersPerSec(rpc.rate()).during(settings.duration()))
                .protocols(rest()))
        .maxDuration(hold.plus(Duration.ofSeconds(60)))
        .assertions(global().failedRequests().count().is(0L));
  }

  private RoundTripStats newCallStats() {
    int cold = (int) settings.cold().toSeconds();
    int end = (int) settings.duration().toSeconds();
    RoundTripStats stats = new RoundTripStats().window("cold", 0, Math.min(cold, end));
    return cold < end ? stats.window("warm", cold, end) : stats;
  }

  private HttpProtocolBuilder rest() {
    String token = new RestAccess(rpc.httpUrl(), rpc.restUser(), rpc.restPassword()).login();
    // One pool of kept-alive connections for all calls, as a REST client would hold; no warm-up
    // request (Gatling's default goes to gatling.io).
    return http.baseUrl(rpc.httpUrl().toString())
        .header("X-Authorization", "Bearer " + token)
        .contentTypeHeader("application/json")
        .acceptHeader("application/json")
        .disableWarmUp()
        .disableCaching()
        .shareConnections();
  }

  /** One user per call: the next device round-robin, the call, its outcome recorded. */
  private ScenarioBuilder caller() {
    String timeout = String.valueOf(rpc.timeout().toMillis());
    return scenario("rest caller")
        .feed(deviceIds())
        .exec(
            session ->
                session
                    .set("seq", sequence.incrementAndGet())
                    .set("startMillis", System.currentTimeMillis())
                    .set("startNanos", System.nanoTime()))
        .exec(
            http("rpc twoway")
                .post("/api/rpc/twoway/#{id}")
                .body(
                    StringBody(
                        session ->
                            "{\"method\":\"echo\",\"params\":{\"seq\":"
                                + session.getLong("seq")
                                + "},\"timeout\":"
                                + timeout
                                + "}"))
                .check(
                    status().saveAs("status"),
                    status().is(200),
                    jsonPath("$.request.params.seq")
                        .ofLong()
                        .is(session -> session.getLong("seq"))))
        .exec(this::record);
  }

  private Session record(Session session) {
    long nanos = System.nanoTime() - session.getLong("startNanos");
    int status = session.contains("status") ? session.getInt("status") : RoundTripStats.NO_RESPONSE;
    // Only the echo check can fail on a 200.
    calls.record(session.getLong("startMillis"), status, !session.isFailed(), nanos);
    return session;
  }

  /** The ids of the devices that connect (the feeder's first {@code devices}), round-robin. */
  private Iterator<Map<String, Object>> deviceIds() {
    List<String> ids =
        DeviceProvisioner.readFeeder(settings.feeder()).stream()
            .limit(settings.devices())
            .map(ProvisionedDevice::id)
            .toList();
    AtomicLong next = new AtomicLong();
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return true;
      }

      @Override
      public Map<String, Object> next() {
        return Map.of("id", ids.get((int) (next.getAndIncrement() % ids.size())));
      }
    };
  }

  /** Rates and CPU over the warm calls: from {@code cold} s after the first call to the last. */
  @Override
  int[] steadyWindowSeconds() {
    int callsStart = (int) (settings.ramp().toSeconds() + settleSeconds());
    int cold = (int) settings.cold().toSeconds();
    int end = callsStart + (int) settings.duration().toSeconds();
    int from = callsStart + cold < end ? callsStart + cold : callsStart;
    return new int[] {from, end};
  }

  // Read during construction (steadyWindowSeconds runs in MqttSimulation's initializer, before
  // this class's fields are set): the system property directly.
  private static long settleSeconds() {
    try {
      return Long.parseLong(System.getProperty("settle", "5").strip());
    } catch (NumberFormatException e) {
      return 5; // RpcSettings reports it
    }
  }

  @Override
  double offeredPerSecond() {
    return rpc.rate();
  }

  @Override
  Map<String, Object> summaryExtra() {
    int[] window = steadyWindowSeconds();
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("rpc", rpc.describe());
    extra.put("rpcCalls", calls.describe());
    extra.put("steadyRpcRequestedPerSecond", stats.meanRpcRequestedPerSecond(window[0], window[1]));
    return extra;
  }

  @Override
  public void after() {
    super.after();
    System.out.printf(
        "RpcRoundTrip: calls=%d answered=%d lost=%d deviceRequests=%d deviceAnswers=%d%n",
        calls.calls(),
        calls.answered(),
        calls.lost(),
        stats.rpcRequestedCount(),
        stats.rpcAnsweredCount());
  }
}
