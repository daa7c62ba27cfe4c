package io.fieldline.transport.mqtt.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Answers the client-side RPCs the server handles itself ({@code v1/devices/me/rpc/request/{id}}):
 *
 * <ul>
 *   <li>{@code getSessionLimits} — the limits this session really has, in ThingsBoard's shape:
 *       {@code maxPayloadSize} (the max packet size), {@code maxInflightMessages}, and {@code
 *       rateLimits} with empty strings, because Fieldline does not refuse or disconnect devices for
 *       their rate: it applies backpressure (stops reading the socket), which is also how client
 *       RPCs beyond {@code client-rpc-rate} are paced;
 *   <li>{@code getCurrentTime} — {@code {"currentTime": epochMillis}}.
 * </ul>
 *
 * Anything else gets {@code {"error": "..."}}. Stateless and thread-safe.
 */
final class ClientRpc {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final MqttTransportConfig config;

  ClientRpc(MqttTransportConfig config) {
    this.config = config;
  }

  /** Builds the response payload for a request payload {@code {"method": ..., "params": ...}}. */
  byte[] answer(byte[] request) {
    ObjectNode response = MAPPER.createObjectNode();
    String method;
    try {
      JsonNode node = MAPPER.readTree(request);
      method = node != null && node.path("method").isTextual() ? node.get("method").asText() : "";
    } catch (IOException e) {
      method = "";
    }
    switch (method) {
      case "getSessionLimits" -> {
        response.put("maxPayloadSize", config.maxPacketSize());
        response.put("maxInflightMessages", config.maxInflight());
        ObjectNode rateLimits = response.putObject("rateLimits");
        rateLimits.put("messages", "");
        rateLimits.put("telemetryMessages", "");
        rateLimits.put("telemetryDataPoints", "");
      }
      case "getCurrentTime" -> response.put("currentTime", System.currentTimeMillis());
      case "" -> response.put("error", "request must be a JSON object with a \"method\"");
      default -> response.put("error", "unsupported method: " + method);
    }
    return response.toString().getBytes(StandardCharsets.UTF_8);
  }
}
