package io.fieldline.server.devhttp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.function.LongSupplier;

/**
 * Answers the client-side RPC requests the server handles itself ({@code POST
 * /api/v1/{token}/rpc}), with the answers the MQTT transport gives on {@code
 * v1/devices/me/rpc/response/{id}}:
 *
 * <ul>
 *   <li>{@code getCurrentTime} — {@code {"currentTime": epochMillis}};
 *   <li>{@code getSessionLimits} — the limits this API applies to the device, in ThingsBoard's
 *       shape: {@code maxPayloadSize} (the largest body), {@code maxInflightMessages} (uploads
 *       being stored at once), and {@code rateLimits} with empty strings: uploads are not limited
 *       by rate (client-side RPC and attribute reads are, by {@code fieldline.mqtt.client-rpc-rate}
 *       and {@code attribute-request-rate});
 *   <li>anything else — {@code {"error": "unsupported method: ..."}}.
 * </ul>
 *
 * Stateless and thread-safe.
 */
final class ClientRpcAnswers {

  private final DeviceApiConfig config;
  private final LongSupplier clock;

  ClientRpcAnswers(DeviceApiConfig config, LongSupplier clock) {
    this.config = config;
    this.clock = clock;
  }

  /**
   * The answer to a request body {@code {"method": ..., "params": ...}}.
   *
   * @throws IllegalArgumentException (400) when the body is not a JSON object with a string {@code
   *     method}
   */
  ObjectNode answer(byte[] body) {
    JsonNode request;
    try {
      request = body.length == 0 ? null : DeviceJson.MAPPER.readTree(body);
    } catch (IOException e) {
      request = null;
    }
    if (request == null || !request.isObject() || !request.path("method").isTextual()) {
      throw new IllegalArgumentException("request must be a JSON object with a \"method\"");
    }
    String method = request.get("method").asText();
    ObjectNode response = DeviceJson.MAPPER.createObjectNode();
    switch (method) {
      case "getCurrentTime" -> response.put("currentTime", clock.getAsLong());
      case "getSessionLimits" -> {
        response.put("maxPayloadSize", config.maxBodyBytes());
        response.put("maxInflightMessages", config.maxWritesPerDevice());
        ObjectNode rateLimits = response.putObject("rateLimits");
        rateLimits.put("messages", "");
        rateLimits.put("telemetryMessages", "");
        rateLimits.put("telemetryDataPoints", "");
      }
      default -> response.put("error", "unsupported method: " + method);
    }
    return response;
  }
}
