package io.fieldline.perf.simulations;

import static io.gatling.javaapi.core.CoreDsl.constantUsersPerSec;
import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.scenario;

import io.gatling.javaapi.core.ScenarioBuilder;
import java.time.Duration;

/**
 * Devices connecting at a fixed rate ({@code rampConnectionsPerSec}, EMQX measured 5,000/s): each
 * connects (token lookup, CONNACK), publishes one message, stays connected for {@code hold} seconds
 * and disconnects. The "connect" request is TCP connect → CONNACK.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.ConnectionStorm \
 *   -Dfeeder=devices.csv -Ddevices=10000 -DrampConnectionsPerSec=1000 -Dhold=20
 * </pre>
 */
public class ConnectionStorm extends MqttSimulation {

  {
    ScenarioBuilder devices =
        scenario("connection storm")
            .feed(tokens())
            .exec(connect())
            .exec(publish())
            .pause(settings.hold())
            .exec(disconnect());
    setUp(
            devices.injectOpen(
                constantUsersPerSec(settings.rampConnectionsPerSec()).during(settings.ramp())))
        .protocols(protocol)
        .maxDuration(settings.ramp().plus(settings.hold()).plus(Duration.ofSeconds(60)))
        .assertions(global().failedRequests().count().is(0L));
  }

  @Override
  int[] steadyWindowSeconds() {
    return new int[] {0, (int) (settings.ramp().toSeconds() + settings.hold().toSeconds())};
  }

  @Override
  double offeredPerSecond() {
    return settings.rampConnectionsPerSec();
  }
}
