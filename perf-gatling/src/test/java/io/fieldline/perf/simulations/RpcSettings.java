package io.fieldline.perf.simulations;

import java.net.URI;
import java.net.URISyntaxException;
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
    URI url = URI.create("http://127.0.0.1:8080");
    String urlValue = System.getProperty("httpUrl", "").strip();
    if (urlValue.isEmpty()) {
      errors.add("httpUrl: required (the REST base URL, e.g. http://127.0.0.1:8080)");
    } else {
      try {
        url = new URI(urlValue);
        if (!"http".equals(url.getScheme()) || url.getHost() == null) {
          errors.add("httpUrl: an http://host:port URL, not " + urlValue);
        }
      } catch (URISyntaxException e) {
        errors.add("httpUrl: not a URL: " + urlValue);
      }
    }
    String user = System.getProperty("restUser", "").strip();
    String password = System.getProperty("restPassword", "");
    if (user.isEmpty() || password.isEmpty()) {
      errors.add("restUser and restPassword: required (the REST login)");
    }
    RpcSettings settings =
        new RpcSettings(
            url,
            user,
            password,
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
