package io.fieldline.perf.simulations;

import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.pace;
import static io.gatling.javaapi.core.CoreDsl.rampUsers;
import static io.gatling.javaapi.core.CoreDsl.scenario;

import io.gatling.javaapi.core.ScenarioBuilder;
import java.time.Duration;

/**
 * N devices, each publishing R messages per second (QoS 1 by default) for the duration: the
 * ThingsBoard benchmark's scenario scaled to the machine. Devices connect at {@code
 * rampConnectionsPerSec}; each one paces itself ({@code pace(1/R)}) and waits for its PUBACK, so a
 * slow server lowers the achieved rate instead of piling up messages: compare achieved with
 * offered.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.DevicesAtRate \
 *   -Dfeeder=devices.csv -Ddevices=2000 -DratePerDevice=1 -Dduration=120 -Dport=1883
 * </pre>
 */
public class DevicesAtRate extends MqttSimulation {

  {
    setUp(
            devicesAtRate("devices at rate")
                .injectOpen(rampUsers(settings.devices()).during(settings.ramp())))
        .protocols(protocol)
        .maxDuration(settings.ramp().plus(settings.duration()).plus(Duration.ofSeconds(60)))
        .assertions(global().failedRequests().count().is(0L));
  }

  /**
   * Each device: connect, publish every 1/R s for the duration (waiting for each PUBACK), leave.
   */
  final ScenarioBuilder devicesAtRate(String name) {
    return scenario(name)
        .feed(tokens())
        .exec(connect())
        .during(settings.duration())
        .on(pace(settings.pace()).exec(publish()))
        .exec(disconnect());
  }

  @Override
  double offeredPerSecond() {
    return settings.devices() * settings.ratePerDevice();
  }
}
