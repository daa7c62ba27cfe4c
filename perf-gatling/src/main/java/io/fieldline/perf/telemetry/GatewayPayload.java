package io.fieldline.perf.telemetry;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.perf.mqtt.MessageContext;
import io.fieldline.perf.mqtt.PayloadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * ThingsBoard gateway telemetry ({@code v1/gateway/telemetry}): one point per child, each child's
 * point in the array form with the message's device timestamp, {@code {"gw-0-child-0":[{"ts":..,
 * "values":{..}}],"gw-0-child-1":[..],..}}. About {@code 120 × children} bytes with 4 keys.
 *
 * <p>Child {@code i} of the gateway named {@code g} is {@link #childName childName(g, i)}: the same
 * children in every message of a gateway (the first message makes Fieldline create them), distinct
 * between gateways. Every point of message {@code n} carries {@code ts = baseTs + n} and the
 * payload's {@code keys}, so a stored message is {@code children × keys} rows found exactly as for
 * a device's own message ({@link TelemetryPayload}). Values vary with gateway, child and sequence.
 *
 * <p>The gateway's name comes from its access token (the connection's username) through {@code
 * gatewayNames}; a token not in it stands for itself. The quoted child names are built once per
 * gateway and kept; thread-safe.
 */
public final class GatewayPayload implements PayloadFactory {

  private final TelemetryPayload point;
  private final int children;
  private final Map<String, String> gatewayNames;
  private final Map<String, String[]> prefixes = new ConcurrentHashMap<>();

  /**
   * @param keys values per point, as {@link TelemetryPayload}
   * @param children children (points) per message, at least 1
   * @param gatewayNames gateway name by access token
   */
  public GatewayPayload(int keys, int children, Map<String, String> gatewayNames) {
    if (children < 1) {
      throw new IllegalArgumentException("children must be at least 1: " + children);
    }
    this.point = new TelemetryPayload(keys);
    this.children = children;
    this.gatewayNames = Map.copyOf(gatewayNames);
  }

  /** The name of child {@code index} (0-based) of gateway {@code gateway}. */
  public static String childName(String gateway, int index) {
    return gateway + "-child-" + index;
  }

  /** Points per message (one per child). */
  public int children() {
    return children;
  }

  /** Values per point. */
  public int keys() {
    return point.keys();
  }

  @Override
  public byte[] payload(MessageContext message) {
    return json(message.username(), message.deviceTs(), message.userId(), message.sequence())
        .getBytes(StandardCharsets.UTF_8);
  }

  /** The JSON text of one message of the gateway whose access token is {@code token}. */
  public String json(String token, long ts, long userId, long sequence) {
    String[] names = prefixes.computeIfAbsent(token, this::quotedChildren);
    StringBuilder out = new StringBuilder(children * 128);
    out.append('{');
    for (int i = 0; i < children; i++) {
      if (i > 0) {
        out.append(',');
      }
      out.append(names[i])
          .append('[')
          .append(point.json(ts, userId * children + i, sequence))
          .append(']');
    }
    return out.append('}').toString();
  }

  /** {@code "name":} of every child of the gateway with access token {@code token}. */
  private String[] quotedChildren(String token) {
    String gateway = gatewayNames.getOrDefault(token, token);
    ObjectMapper json = new ObjectMapper();
    String[] names = new String[children];
    try {
      for (int i = 0; i < children; i++) {
        names[i] = json.writeValueAsString(childName(gateway, i)) + ':';
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return names;
  }
}
