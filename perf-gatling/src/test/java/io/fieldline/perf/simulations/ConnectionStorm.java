package io.fieldline.perf.simulations;

import static io.fieldline.perf.mqtt.MqttDsl.mqtt;
import static io.gatling.javaapi.core.CoreDsl.exec;
import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.pause;
import static io.gatling.javaapi.core.CoreDsl.rampUsers;
import static io.gatling.javaapi.core.CoreDsl.scenario;

import io.fieldline.perf.mqtt.MqttDsl;
import io.gatling.javaapi.core.ScenarioBuilder;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Two storms, chosen by {@code storm}:
 *
 * <ul>
 *   <li>{@code connect} (default): devices connect at a fixed rate ({@code rampConnectionsPerSec},
 *       EMQX measured 5,000/s; spread evenly over {@link SimulationSettings#ramp()}, whole seconds,
 *       so exactly that rate when {@code devices} is a multiple of it), each connects (token
 *       lookup, CONNACK), publishes one message, stays connected for {@code hold} seconds and
 *       disconnects. The "connect" request is TCP connect → CONNACK.
 *   <li>{@code reconnect}: every device connects (at {@code rampConnectionsPerSec}) and publishes
 *       at {@code ratePerDevice} (one QoS 1 message in flight) until {@code ramp + hold} seconds
 *       after the start; there every device closes its socket without DISCONNECT (as after a
 *       network outage), reconnects at once ("reconnect", retried each second while refused) and
 *       publishes for {@code duration} seconds more. The summary tells how long after the drop each
 *       device's first PUBACK came ({@code resumeAfterDropMillis}: its max is the time until every
 *       device publishes again) and the refused CONNACKs by return code.
 * </ul>
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.ConnectionStorm \
 *   -Dfeeder=devices.csv -Ddevices=10000 -DrampConnectionsPerSec=1000 -Dhold=20 [-Dstorm=reconnect -Dduration=60]
 * </pre>
 */
public class ConnectionStorm extends MqttSimulation {

  /** When injection started (set in {@link #before()}): the reconnect storm's clock. */
  private volatile long originMillis;

  {
    if (reconnect()) {
      setUp(reconnectStorm().injectOpen(rampUsers(settings.devices()).during(settings.ramp())))
          .protocols(protocol)
          .maxDuration(
              settings
                  .ramp()
                  .plus(settings.hold())
                  .plus(settings.duration())
                  .plus(Duration.ofSeconds(60)))
          .assertions(global().failedRequests().count().is(0L));
    } else {
      ScenarioBuilder devices =
          scenario("connection storm")
              .feed(tokens())
              .exec(connect())
              .exec(publish())
              .pause(settings.hold())
              .exec(disconnect());
      // Exactly one user per device (constantUsersPerSec over the rounded-up ramp would inject
      // more users than the feeder has devices when devices is not a multiple of the rate).
      setUp(devices.injectOpen(rampUsers(settings.devices()).during(settings.ramp())))
          .protocols(protocol)
          .maxDuration(settings.ramp().plus(settings.hold()).plus(Duration.ofSeconds(60)))
          .assertions(global().failedRequests().count().is(0L));
    }
  }

  private boolean reconnect() {
    return settings.storm().equals("reconnect");
  }

  private ScenarioBuilder reconnectStorm() {
    long paceMillis = settings.pace().toMillis();
    return scenario("reconnect storm")
        .feed(tokens())
        .exec(connect())
        // publish while a whole pace still fits before the drop, then wait for the drop instant
        .asLongAs(session -> System.currentTimeMillis() + paceMillis <= dropAtMillis())
        .on(exec(pace()).exec(publish()))
        .pause(
            session -> Duration.ofMillis(Math.max(0, dropAtMillis() - System.currentTimeMillis())))
        .exec(mqtt("drop").drop())
        .asLongAs(
            session -> !MqttDsl.isConnected(session) && System.currentTimeMillis() < endAtMillis())
        .on(
            exec(mqtt("reconnect").connect().username("#{token}"))
                .doIf(session -> !MqttDsl.isConnected(session))
                .then(pause(Duration.ofSeconds(1))))
        .asLongAs(session -> System.currentTimeMillis() < endAtMillis())
        .on(exec(pace()).exec(publish()))
        .exec(disconnect());
  }

  private io.gatling.javaapi.core.ChainBuilder pace() {
    return io.gatling.javaapi.core.CoreDsl.pace(settings.pace());
  }

  @Override
  public void before() {
    originMillis = System.currentTimeMillis();
  }

  private long dropAtMillis() {
    return originMillis + dropSecond() * 1000L;
  }

  private long endAtMillis() {
    return dropAtMillis() + settings.duration().toMillis();
  }

  private int dropSecond() {
    return (int) (settings.ramp().toSeconds() + settings.hold().toSeconds());
  }

  @Override
  int[] steadyWindowSeconds() {
    if (reconnect()) {
      return new int[] {0, dropSecond() + (int) settings.duration().toSeconds()};
    }
    return new int[] {0, (int) (settings.ramp().toSeconds() + settings.hold().toSeconds())};
  }

  @Override
  Map<String, int[]> namedWindows() {
    Map<String, int[]> windows = new LinkedHashMap<>();
    if (reconnect()) {
      int drop = dropSecond();
      windows.put("beforeDrop", new int[] {(int) settings.ramp().toSeconds(), drop});
      windows.put("afterDrop", new int[] {drop, drop + (int) settings.duration().toSeconds()});
    }
    return windows;
  }

  @Override
  double offeredPerSecond() {
    return reconnect()
        ? settings.devices() * settings.ratePerDevice()
        : settings.rampConnectionsPerSec();
  }
}
