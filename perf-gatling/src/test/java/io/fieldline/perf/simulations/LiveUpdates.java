package io.fieldline.perf.simulations;

import static io.fieldline.perf.mqtt.MqttDsl.mqtt;
import static io.gatling.javaapi.core.CoreDsl.atOnceUsers;
import static io.gatling.javaapi.core.CoreDsl.exec;
import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.pace;
import static io.gatling.javaapi.core.CoreDsl.pause;
import static io.gatling.javaapi.core.CoreDsl.rampUsers;
import static io.gatling.javaapi.core.CoreDsl.scenario;
import static io.gatling.javaapi.http.HttpDsl.http;
import static io.gatling.javaapi.http.HttpDsl.ws;

import io.fieldline.perf.live.LivePayload;
import io.fieldline.perf.live.LiveUpdateStats;
import io.fieldline.perf.provision.DeviceProvisioner;
import io.fieldline.perf.provision.ProvisionedDevice;
import io.gatling.http.action.ws.WsInboundMessage;
import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.ScenarioBuilder;
import io.gatling.javaapi.core.Session;
import io.gatling.javaapi.http.HttpProtocolBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Publish → WebSocket update (issue 15): {@code devices} devices connect (at {@code
 * rampConnectionsPerSec}) and publish {@code ratePerDevice} QoS {@code qos} messages per second
 * each for {@code duration} s, every message stamped with Gatling's clock as its timestamp ({@link
 * LivePayload}); at the same moment {@code wsSessions} WebSocket sessions ({@code /api/ws},
 * Gatling's WebSocket support) log in as {@code restUser} and open {@code subscriptions} live
 * subscriptions in all ({@code TIMESERIES}, {@code LATEST_TELEMETRY}, one device each, spread
 * evenly over the fleet), all in their first message; they stay until {@code wsGrace} s after the
 * last device stopped, sending an empty command every {@code wsKeepAlive} s (default 30; the server
 * closes a session silent for 90 s).
 *
 * <p>Measured ({@link LiveUpdateStats}, {@code liveUpdates} in the summary): for each message of a
 * watched device, the arrival of the update carrying it − its timestamp (both on Gatling's clock,
 * the frame stamped as Netty hands it over: ms resolution), and − its own PUBACK; updates expected
 * (acknowledged messages newer than a subscription's first update, which carries the current values
 * and is not timed) against received; windows {@code cold} (the first {@code cold} s from the first
 * connection attempt) and {@code warm} (the rest), as for the PUBACK latency of the same run.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.LiveUpdates \
 *   -Dfeeder=devices.csv -Ddevices=1000 -Dport=1883 -DhttpUrl=http://127.0.0.1:8080 \
 *   -DrestUser=admin@fieldline.local -DrestPassword=... -Dsubscriptions=100 -DwsSessions=10 \
 *   -Dduration=120 -Dcold=60
 * </pre>
 */
public class LiveUpdates extends MqttSimulation {

  private final LiveSettings live = LiveSettings.fromSystemProperties();
  private final List<ProvisionedDevice> fleet = fleet();
  private final LiveUpdateStats updates = watched();
  private final LivePayload livePayload = new LivePayload(payload, updates);

  {
    // Sessions stay until the last device (connected at the end of the ramp) has published for
    // the duration, and a grace after.
    Duration hold = settings.ramp().plus(settings.duration()).plus(live.grace());
    setUp(
            devices()
                .injectOpen(rampUsers(settings.devices()).during(settings.ramp()))
                .protocols(protocol),
            dashboards(hold).injectOpen(atOnceUsers(live.sessions())).protocols(websocket()))
        .maxDuration(hold.plus(Duration.ofSeconds(60)))
        .assertions(global().failedRequests().count().is(0L));
  }

  private List<ProvisionedDevice> fleet() {
    List<ProvisionedDevice> devices =
        DeviceProvisioner.readFeeder(settings.feeder()).stream().limit(settings.devices()).toList();
    if (live.subscriptions() > devices.size()) {
      throw new IllegalArgumentException(
          "subscriptions: "
              + live.subscriptions()
              + " subscriptions need as many devices, the run has "
              + devices.size());
    }
    return devices;
  }

  private LiveUpdateStats watched() {
    LiveUpdateStats stats = new LiveUpdateStats();
    for (int id = 1; id <= live.subscriptions(); id++) {
      ProvisionedDevice device = fleet.get(live.deviceIndex(id, fleet.size()));
      stats.watch(id, device.id(), device.token());
    }
    return stats;
  }

  /**
   * Each device: connect, publish every 1/R s for the duration (waiting for each PUBACK), leave.
   */
  private ScenarioBuilder devices() {
    return scenario("devices")
        .feed(tokens())
        .exec(connect())
        .during(settings.duration())
        .on(
            pace(settings.pace())
                .exec(
                    mqtt("publish telemetry")
                        .publish(TELEMETRY_TOPIC)
                        .qos(settings.qos())
                        .payload(livePayload)))
        .exec(disconnect());
  }

  private HttpProtocolBuilder websocket() {
    // One buffer of unmatched messages per socket, emptied every second: room for minutes of
    // updates of 100 subscriptions. No warm-up request (Gatling's default goes to gatling.io).
    return http.wsBaseUrl(live.rest().wsUrl())
        .wsUnmatchedInboundMessageBufferSize(100_000)
        .disableWarmUp();
  }

  /**
   * Each WebSocket session (a dashboard): connect, authenticate and subscribe in one message, then
   * once a second hand every update received to {@link LiveUpdateStats} (timed at its arrival, not
   * here), with an empty command every {@code wsKeepAlive} s; close after {@code hold}.
   *
   * <p>Gatling empties a socket's buffer of unmatched messages whenever it sends a frame, so the
   * buffer is drained right before each send, in the same turn of the socket's event loop (the
   * first message goes out before the server has anything to say).
   */
  private ScenarioBuilder dashboards(Duration hold) {
    String token = live.rest().login();
    long keepAliveTicks = live.keepAlive().toSeconds();
    return scenario("dashboards")
        .feed(sessions(token))
        .exec(ws("ws connect").connect("/api/ws"))
        .exec(
            session -> {
              long now = System.currentTimeMillis();
              for (Integer id : session.<Integer>getList("ids")) {
                updates.subscribed(id, now);
              }
              return session;
            })
        .exec(ws("ws subscribe").sendText(session -> session.getString("subscribe")))
        .during(hold, "tick")
        .on(
            pause(Duration.ofSeconds(1))
                .exec(drain())
                .doIf(session -> (session.getInt("tick") + 1) % keepAliveTicks == 0)
                .then(exec(ws("ws keep-alive").sendText("{\"cmds\":[]}"))))
        .exec(drain())
        .exec(ws("ws close").close());
  }

  private ChainBuilder drain() {
    return exec(ws.processUnmatchedMessages(this::received));
  }

  private Session received(List<WsInboundMessage> messages, Session session) {
    for (WsInboundMessage message : messages) {
      if (message instanceof WsInboundMessage.Text text) {
        updates.received(text.message(), text.timestamp());
      }
    }
    return session;
  }

  /** One record per session: its subscription ids and its first message. */
  private Iterator<Map<String, Object>> sessions(String token) {
    List<Map<String, Object>> records = new ArrayList<>();
    for (int session = 0; session < live.sessions(); session++) {
      List<Integer> ids = live.subscriptionIds(session);
      StringBuilder first = new StringBuilder();
      first.append("{\"authCmd\":{\"cmdId\":0,\"token\":\"").append(token).append("\"},\"cmds\":[");
      for (int i = 0; i < ids.size(); i++) {
        int id = ids.get(i);
        ProvisionedDevice device = fleet.get(live.deviceIndex(id, fleet.size()));
        first
            .append(i == 0 ? "" : ",")
            .append("{\"type\":\"TIMESERIES\",\"cmdId\":")
            .append(id)
            .append(",\"entityType\":\"DEVICE\",\"entityId\":\"")
            .append(device.id())
            .append("\",\"scope\":\"LATEST_TELEMETRY\"}");
      }
      first.append("]}");
      records.add(Map.of("ids", ids, "subscribe", first.toString()));
    }
    return records.iterator();
  }

  @Override
  Map<String, int[]> namedWindows() {
    int cold = (int) settings.cold().toSeconds();
    int end = (int) (settings.ramp().toSeconds() + settings.duration().toSeconds());
    Map<String, int[]> windows = new LinkedHashMap<>();
    windows.put("cold", new int[] {0, Math.min(cold, end)});
    if (cold < end) {
      windows.put("warm", new int[] {cold, end});
    }
    return windows;
  }

  /** Rates and CPU over the warm window. */
  @Override
  int[] steadyWindowSeconds() {
    int[] warm = namedWindows().get("warm");
    return warm != null ? warm : namedWindows().get("cold");
  }

  @Override
  double offeredPerSecond() {
    return settings.devices() * settings.ratePerDevice();
  }

  @Override
  Map<String, Object> summaryExtra() {
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("live", live.describe());
    extra.put("liveUpdates", updates.describe(stats.originEpochMillis(), namedWindows()));
    return extra;
  }

  @Override
  public void after() {
    super.after();
    Map<String, Object> all = updates.describe(stats.originEpochMillis(), Map.of());
    System.out.printf(
        "LiveUpdates: subscriptions=%d started=%s expected=%s received=%s lost=%s errors=%s%n",
        updates.subscriptionCount(),
        all.get("subscriptionsStarted"),
        all.get("expected"),
        all.get("received"),
        all.get("lost"),
        all.get("errors"));
  }
}
