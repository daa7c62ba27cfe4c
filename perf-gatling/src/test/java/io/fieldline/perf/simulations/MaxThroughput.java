package io.fieldline.perf.simulations;

import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.rampUsers;
import static io.gatling.javaapi.core.CoreDsl.scenario;

import io.gatling.javaapi.core.ScenarioBuilder;
import java.time.Duration;

/**
 * Closed loop: N devices, each publishing its next message as soon as the previous one is
 * acknowledged (one in flight per device), for the duration. The achieved rate is the broker's
 * saturation rate for that concurrency; raise {@code devices} until it stops growing.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.MaxThroughput \
 *   -Dfeeder=devices.csv -Ddevices=1000 -Dduration=60
 * </pre>
 */
public class MaxThroughput extends MqttSimulation {

  {
    ScenarioBuilder devices =
        scenario("max throughput")
            .feed(tokens())
            .exec(connect())
            .during(settings.duration())
            .on(publish())
            .exec(disconnect());
    setUp(devices.injectOpen(rampUsers(settings.devices()).during(settings.ramp())))
        .protocols(protocol)
        .maxDuration(settings.ramp().plus(settings.duration()).plus(Duration.ofSeconds(60)))
        .assertions(global().failedRequests().count().is(0L));
  }

  @Override
  double offeredPerSecond() {
    return 0;
  }
}
