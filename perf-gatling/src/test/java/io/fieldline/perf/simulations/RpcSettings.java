package io.fieldline.perf.simulations;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link RpcRoundTrip} needs besides {@link SimulationSettings}, from system properties,
 * validated at once.
 *
 * @param httpUrl the REST base URL the calls go to ({@code httpUrl}, required), e.g. {@code
 *     http://127.0.0.1:8080}: in a cluster another node than the devices' MQTT {@code port}
 * @param restUser the user that logs in ({@code restUser}, required)
 * @param restPassword its password ({@code restPassword}, required)
 * @param rate two-way calls per second, an open model ({@code rpcRate}, default 500): new calls
 *     start at this rate whatever the answers do
 * @param timeout the calls' {@code "timeout"} ({@code rpcTimeout}, ms, default 10000): the server
 *     answers 504 after it
 * @param settle seconds between the last device's connect and the first call ({@code settle},
 *     default 5)
 * @param qos QoS of the devices' RPC subscription and answers ({@code rpcQos}, 0 or 1, default 1)
 */
public record RpcSettings(
    URI httpUrl,
    String restUser,
    String restPassword,
    double rate,
    Duration timeout,
    Duration settle,
    int qos) {

  public static RpcSettings fromSystemProperties() {
    List<String> errors = new ArrayList<>();
    RestAccess rest = RestAccess.fromSystemProperties(errors);
    RpcSettings settings =
        new RpcSettings(
            rest.httpUrl(),
            rest.user(),
            rest.password(),
            SimulationSettings.doubleProperty("rpcRate", 500, errors),
            Duration.ofMillis(
                SimulationSettings.intProperty("rpcTimeout", 10_000, 100, 600_000, errors)),
            Duration.ofSeconds(SimulationSettings.intProperty("settle", 5, 0, 600, errors)),
            SimulationSettings.intProperty("rpcQos", 1, 0, 1, errors));
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException("bad RPC settings: " + String.join("; ", errors));
    }
    return settings;
  }

  /** Settings as they go into the run's summary (no password). */
  public Map<String, Object> describe() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("httpUrl", httpUrl.toString());
    out.put("rpcRate", rate);
    out.put("rpcTimeoutMillis", timeout.toMillis());
    out.put("settleSeconds", settle.toSeconds());
    out.put("rpcQos", qos);
    return out;
  }
}
