package io.fieldline.perf.simulations;

import static io.fieldline.perf.mqtt.MqttDsl.mqtt;
import static io.gatling.javaapi.core.CoreDsl.global;
import static io.gatling.javaapi.core.CoreDsl.pace;
import static io.gatling.javaapi.core.CoreDsl.rampUsers;
import static io.gatling.javaapi.core.CoreDsl.scenario;

import io.fieldline.perf.mqtt.MessageContext;
import io.fieldline.perf.mqtt.MqttDsl;
import io.fieldline.perf.provision.DeviceProvisioner;
import io.fieldline.perf.provision.ProvisionedDevice;
import io.fieldline.perf.telemetry.GatewayPayload;
import io.gatling.javaapi.core.ChainBuilder;
import io.gatling.javaapi.core.CoreDsl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Gateways (issue 17): {@code devices} gateway devices (created with {@code "additionalInfo":
 * {"gateway":true}}) connect at {@code rampConnectionsPerSec} and each publishes {@code
 * ratePerDevice} messages per second on {@code v1/gateway/telemetry} for the duration, QoS {@code
 * qos}, one message in flight per gateway ({@code pace}, as {@link DevicesAtRate}): every message
 * carries one point ({@code keys} values, the message's timestamp) for each of the gateway's {@code
 * children} children ({@link GatewayPayload}). Fieldline acknowledges a message once every child's
 * rows are stored; a gateway's first message makes it create its children (one at a time per
 * session), and that cost is in the run, not left out. A gateway whose connection the server closes
 * (a message it could not store) reconnects at its next pace, as a real gateway does: the message
 * in flight is KO, the summary's {@code connects} exceeds the gateways.
 *
 * <p>Windows as {@link ColdStart}'s (the run is started against a fresh server): {@code cold} (the
 * first {@code cold} s from the first connection attempt), {@code warm} (the next {@code cold} s,
 * also the steady window) and {@code run} (everything). The summary adds {@code pointsPerMessage}
 * (= children) so that the report gives points per second and CPU per point.
 *
 * <pre>
 * mvn -pl perf-gatling gatling:test -Dgatling.simulationClass=io.fieldline.perf.simulations.GatewayFleet \
 *   -Dfeeder=gateways.csv -Ddevices=50 -Dchildren=100 -DratePerDevice=1 -Dduration=180 -Dcold=60 -Dport=1883
 * </pre>
 */
public class GatewayFleet extends MqttSimulation {

  static final String GATEWAY_TELEMETRY_TOPIC = "v1/gateway/telemetry";

  /** Bytes a point's values may be longer than those of the sample message (digits vary). */
  private static final int VALUE_MARGIN = 8;

  private final GatewaySettings gateways = GatewaySettings.fromSystemProperties();
  private final GatewayPayload gatewayPayload = gatewayPayload();

  {
    setUp(
            scenario("gateways")
                .feed(tokens())
                .exec(connect())
                .during(settings.duration())
                .on(
                    pace(settings.pace())
                        .doIfOrElse(MqttDsl::isConnected)
                        .then(publishForChildren())
                        .orElse(reconnect()))
                .exec(disconnect())
                .injectOpen(rampUsers(settings.devices()).during(settings.ramp())))
        .protocols(protocol)
        .maxDuration(settings.ramp().plus(settings.duration()).plus(Duration.ofSeconds(60)))
        .assertions(global().failedRequests().count().is(0L));
  }

  /** The payload, once the largest message of the run is known to fit the server's packets. */
  private GatewayPayload gatewayPayload() {
    Map<String, String> names = new HashMap<>();
    List<ProvisionedDevice> feeder = DeviceProvisioner.readFeeder(settings.feeder());
    for (ProvisionedDevice gateway : feeder) {
      names.put(gateway.token(), gateway.name());
    }
    GatewayPayload built = new GatewayPayload(settings.keys(), gateways.children(), names);
    int largest = 0;
    for (ProvisionedDevice gateway :
        feeder.subList(0, Math.min(feeder.size(), settings.devices()))) {
      largest = Math.max(largest, built.payload(sample(gateway.token())).length);
    }
    List<String> errors = new ArrayList<>();
    if (!gateways.fits(largest + VALUE_MARGIN * gateways.children(), errors)) {
      throw new IllegalArgumentException("bad gateway settings: " + String.join("; ", errors));
    }
    return built;
  }

  /** A message of the gateway with a 13-digit timestamp, as every message of the run has. */
  private static MessageContext sample(String token) {
    return new MessageContext(0, 0, 9_999_999_999_999L, token, 0);
  }

  /**
   * A gateway whose connection the server closed (a message it could not store: no PUBACK, the
   * connection closes, as for any failed write) connects again, as a real gateway does, at most
   * once per pace; its next message names its children to a new session, which looks them up.
   */
  private ChainBuilder reconnect() {
    return CoreDsl.exec(mqtt("reconnect").connect().username("#{token}"));
  }

  private ChainBuilder publishForChildren() {
    return CoreDsl.exec(
        mqtt("publish gateway telemetry")
            .publish(GATEWAY_TELEMETRY_TOPIC)
            .qos(settings.qos())
            .payload(gatewayPayload));
  }

  @Override
  int[] steadyWindowSeconds() {
    return ColdStart.warmWindow(settings);
  }

  @Override
  Map<String, int[]> namedWindows() {
    return ColdStart.coldWarmAndRun(settings);
  }

  @Override
  Map<String, Object> summaryExtra() {
    Map<String, Object> extra = new LinkedHashMap<>(gateways.describe());
    extra.put("gateways", settings.devices());
    extra.put("pointsPerMessage", gateways.children());
    return extra;
  }

  @Override
  double offeredPerSecond() {
    return settings.devices() * settings.ratePerDevice();
  }
}
