package io.fieldline.perf.simulations;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link GatewayFleet} needs besides {@link SimulationSettings} (whose {@code devices} are the
 * gateways), from system properties, validated at once.
 *
 * @param children child devices per gateway, one point each in every message ({@code children},
 *     default 100, at most 1,000: Fieldline's default {@code
 *     fieldline.mqtt.gateway.max-devices-per-message})
 * @param maxPacketSize the largest MQTT packet the server takes ({@code maxPacketSize}, bytes,
 *     default 65,536: Fieldline's default {@code fieldline.mqtt.max-packet-size}); a message that
 *     would not fit is refused before the run
 */
public record GatewaySettings(int children, int maxPacketSize) {

  /** Fieldline's default {@code fieldline.mqtt.gateway.max-devices-per-message}. */
  static final int MAX_CHILDREN = 1000;

  /** Bytes of a PUBLISH besides its payload, with the topic {@code v1/gateway/telemetry}. */
  static final int PUBLISH_OVERHEAD = 2 + GatewayFleet.GATEWAY_TELEMETRY_TOPIC.length() + 2;

  public static GatewaySettings fromSystemProperties() {
    List<String> errors = new ArrayList<>();
    GatewaySettings settings =
        new GatewaySettings(
            SimulationSettings.intProperty("children", 100, 1, MAX_CHILDREN, errors),
            SimulationSettings.intProperty("maxPacketSize", 65_536, 1_024, 268_435_455, errors));
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException("bad gateway settings: " + String.join("; ", errors));
    }
    return settings;
  }

  /**
   * Whether a message of {@code payloadBytes} (the largest the run will send) fits the server's
   * packet size; an explanation goes to {@code errors} when it does not.
   */
  boolean fits(int payloadBytes, List<String> errors) {
    int packet = payloadBytes + PUBLISH_OVERHEAD;
    if (packet <= maxPacketSize) {
      return true;
    }
    errors.add(
        "children: a message of "
            + children
            + " points is "
            + packet
            + " bytes, over the server's packet size of "
            + maxPacketSize
            + " (fewer children, or raise fieldline.mqtt.max-packet-size and pass"
            + " -DmaxPacketSize)");
    return false;
  }

  /** Settings as they go into the run's summary. */
  public Map<String, Object> describe() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("children", children);
    out.put("maxPacketSize", maxPacketSize);
    return out;
  }
}
