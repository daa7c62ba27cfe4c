package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.rpc.StoredRpc;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.fleet.rpc.RpcConfig;
import java.io.IOException;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The JSON of server-side RPC in ThingsBoard's shapes: the request body of {@code POST
 * /api/rpc/{oneway|twoway}/{deviceId}} and the stored request of {@code GET
 * /api/rpc/persistent/{rpcId}}. Stateless.
 */
final class RpcJson {

  /** Longest method name accepted. */
  static final int MAX_METHOD_LENGTH = 255;

  /** Most retries a persistent request may ask for. */
  static final int MAX_RETRIES = 100;

  private RpcJson() {}

  /**
   * Reads a request body: {@code method} (required), {@code params} (any JSON, {@code {}} when
   * absent), {@code timeout} (milliseconds), {@code expirationTime} (epoch milliseconds, default
   * now + timeout), {@code persistent}, {@code retries}, {@code additionalInfo}.
   *
   * @throws IllegalArgumentException (400) for anything out of shape or out of bounds
   */
  static ToDeviceRpc request(
      String body, DeviceId device, boolean oneway, RpcConfig config, long now) {
    JsonNode json = HttpJson.parseObject(body);
    JsonNode method = json.path("method");
    if (!method.isTextual() || method.asText().isBlank()) {
      throw new IllegalArgumentException("\"method\" must be a non-empty string");
    }
    if (method.asText().length() > MAX_METHOD_LENGTH) {
      throw new IllegalArgumentException(
          "\"method\" must be at most " + MAX_METHOD_LENGTH + " characters");
    }
    JsonNode params = json.get("params");
    String paramsJson = params == null || params.isNull() ? "{}" : params.toString();
    boolean persistent = booleanField(json, "persistent");
    // A lightweight call holds its HTTP request open for its timeout; a persistent request's
    // timeout is its wait for an answer after each delivery, bounded by its life.
    long maxTimeout = (persistent ? config.maxPersistentTtl() : config.maxTimeout()).toMillis();
    long timeout = positiveLong(json, "timeout", config.defaultTimeout().toMillis());
    if (timeout > maxTimeout) {
      throw new IllegalArgumentException("\"timeout\" must be at most " + maxTimeout + " ms");
    }
    long expirationTime = positiveLong(json, "expirationTime", now + timeout);
    long furthest = now + (persistent ? config.maxPersistentTtl() : config.maxTimeout()).toMillis();
    if (expirationTime <= now || expirationTime > furthest) {
      throw new IllegalArgumentException(
          "\"expirationTime\" must be in the future and at most " + (furthest - now) + " ms ahead");
    }
    JsonNode retriesNode = json.get("retries");
    int retries = 0;
    if (retriesNode != null && !retriesNode.isNull()) {
      if (!retriesNode.isIntegralNumber()
          || !retriesNode.canConvertToInt()
          || retriesNode.asInt() < 0
          || retriesNode.asInt() > MAX_RETRIES) {
        throw new IllegalArgumentException("\"retries\" must be an integer in 0.." + MAX_RETRIES);
      }
      retries = retriesNode.asInt();
    }
    JsonNode info = json.get("additionalInfo");
    return new ToDeviceRpc(
        UUID.randomUUID(),
        device,
        method.asText(),
        paramsJson,
        oneway,
        persistent,
        timeout,
        expirationTime,
        retries,
        info == null || info.isNull() ? null : info.toString());
  }

  // ThingsBoard reads "persistent" as a JSON boolean; anything else ("yes", 1) would silently be
  // a lightweight call, so it is refused.
  private static boolean booleanField(JsonNode json, String field) {
    JsonNode node = json.get(field);
    if (node == null || node.isNull()) {
      return false;
    }
    if (!node.isBoolean()) {
      throw new IllegalArgumentException("\"" + field + "\" must be true or false");
    }
    return node.booleanValue();
  }

  private static long positiveLong(JsonNode json, String field, long fallback) {
    JsonNode node = json.get(field);
    if (node == null || node.isNull()) {
      return fallback;
    }
    if (!node.canConvertToLong() || !node.isIntegralNumber() || node.asLong() <= 0) {
      throw new IllegalArgumentException("\"" + field + "\" must be a positive integer");
    }
    return node.asLong();
  }

  /** A device's answer as a JSON value: itself when it is JSON, a JSON string otherwise. */
  static JsonNode answer(@Nullable String body) {
    if (body == null) {
      return JsonViews.MAPPER.nullNode();
    }
    try {
      JsonNode parsed = JsonViews.MAPPER.readTree(body);
      return parsed == null ? TextNode.valueOf(body) : parsed;
    } catch (IOException e) {
      return TextNode.valueOf(body);
    }
  }

  /** A stored request, in the shape of ThingsBoard's {@code Rpc} entity. */
  static ObjectNode stored(StoredRpc rpc) {
    ToDeviceRpc request = rpc.request();
    ObjectNode node = JsonViews.MAPPER.createObjectNode();
    ObjectNode id = node.putObject("id");
    id.put("entityType", "RPC");
    id.put("id", request.id().toString());
    node.put("createdTime", rpc.createdTime());
    node.set("deviceId", JsonViews.deviceId(request.deviceId()));
    node.put("expirationTime", request.expirationTime());
    ObjectNode body = JsonViews.MAPPER.createObjectNode();
    body.put("method", request.method());
    body.put("params", request.paramsJson());
    ObjectNode requestNode = node.putObject("request");
    requestNode.put("id", request.id().toString());
    requestNode.set("deviceId", JsonViews.deviceId(request.deviceId()));
    requestNode.put("oneway", request.oneway());
    requestNode.put("expirationTime", request.expirationTime());
    requestNode.set("body", body);
    requestNode.put("persisted", true);
    requestNode.put("retries", request.retries());
    requestNode.put("timeout", request.timeoutMillis());
    node.set("response", answer(rpc.responseJson()));
    node.put("status", rpc.status().name());
    node.set("additionalInfo", answer(request.additionalInfoJson()));
    return node;
  }
}
