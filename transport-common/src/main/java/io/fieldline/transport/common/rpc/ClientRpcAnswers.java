package io.fieldline.transport.common.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Answers the client-side RPCs the server handles itself, for both device transports (MQTT {@code
 * v1/devices/me/rpc/request/{id}}, HTTP {@code POST /api/v1/{token}/rpc}):
 *
 * <ul>
 *   <li>{@code getSessionLimits} — the limits the device really has, in ThingsBoard's shape: {@code
 *       maxPayloadSize} (the largest packet or body), {@code maxInflightMessages} (messages being
 *       stored at once), and {@code rateLimits} with empty strings, because Fieldline does not
 *       refuse or disconnect devices for their message rate: MQTT applies backpressure (stops
 *       reading the socket), which is also how client RPCs beyond {@code client-rpc-rate} are
 *       paced; HTTP refuses only client-side RPC and attribute reads beyond their rates;
 *   <li>{@code getCurrentTime} — {@code {"currentTime": epochMillis}}.
 * </ul>
 *
 * Anything else gets {@code {"error": "unsupported method: ..."}}. Stateless and thread-safe.
 */
public final class ClientRpcAnswers {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final long maxPayloadSize;
  private final int maxInflightMessages;
  private final LongSupplier clock;

  /**
   * @param maxPayloadSize the largest message the transport takes, in bytes
   * @param maxInflightMessages the messages of one device (connection) being stored at once
   * @param clock epoch milliseconds, for {@code getCurrentTime}
   */
  public ClientRpcAnswers(long maxPayloadSize, int maxInflightMessages, LongSupplier clock) {
    this.maxPayloadSize = maxPayloadSize;
    this.maxInflightMessages = maxInflightMessages;
    this.clock = clock;
  }

  /**
   * The answer to a request {@code {"method": ..., "params": ...}} (HTTP's body).
   *
   * @throws IllegalArgumentException when the request is not a JSON object with a string {@code
   *     method} (HTTP answers it 400)
   */
  public ObjectNode answer(byte[] request) {
    String method = method(request);
    if (method == null) {
      throw new IllegalArgumentException("request must be a JSON object with a \"method\"");
    }
    return answer(method);
  }

  /**
   * The answer payload to a request payload (MQTT's): a request that is not a JSON object with a
   * string {@code method} is answered with an {@code error} too, as there is no status to give.
   */
  public byte[] answerPayload(byte[] request) {
    String method = method(request);
    ObjectNode response;
    if (method == null) {
      response = MAPPER.createObjectNode();
      response.put("error", "request must be a JSON object with a \"method\"");
    } else {
      response = answer(method);
    }
    return response.toString().getBytes(StandardCharsets.UTF_8);
  }

  private ObjectNode answer(String method) {
    ObjectNode response = MAPPER.createObjectNode();
    switch (method) {
      case "getSessionLimits" -> {
        response.put("maxPayloadSize", maxPayloadSize);
        response.put("maxInflightMessages", maxInflightMessages);
        ObjectNode rateLimits = response.putObject("rateLimits");
        rateLimits.put("messages", "");
        rateLimits.put("telemetryMessages", "");
        rateLimits.put("telemetryDataPoints", "");
      }
      case "getCurrentTime" -> response.put("currentTime", clock.getAsLong());
      default -> response.put("error", "unsupported method: " + method);
    }
    return response;
  }

  private static @Nullable String method(byte[] request) {
    if (request.length == 0) {
      return null;
    }
    try {
      JsonNode node = MAPPER.readTree(request);
      return node != null && node.isObject() && node.path("method").isTextual()
          ? node.get("method").asText()
          : null;
    } catch (IOException e) {
      return null;
    }
  }
}
