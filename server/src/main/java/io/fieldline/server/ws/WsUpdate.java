package io.fieldline.server.ws;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.kv.KvEntry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One update of ThingsBoard's WebSocket API, as it sends them: {@code {"subscriptionId":N,
 * "errorCode":0,"errorMsg":null,"data":{"key":[[ts,"value"],…]},"latestValues":{"key":ts}}}. Values
 * are strings (a JSON value is its text), each key's points in the order added. Built on one
 * thread, then {@linkplain #json() serialised}.
 */
final class WsUpdate {

  /** ThingsBoard's {@code SubscriptionErrorCode} values used here. */
  enum ErrorCode {
    NO_ERROR(0),
    INTERNAL_ERROR(1),
    BAD_REQUEST(2),
    UNAUTHORIZED(3);

    final int code;

    ErrorCode(int code) {
      this.code = code;
    }
  }

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final int subscriptionId;
  private final Map<String, ArrayNode> data = new LinkedHashMap<>();
  private final Map<String, Long> latest = new LinkedHashMap<>();

  WsUpdate(int subscriptionId) {
    this.subscriptionId = subscriptionId;
  }

  /** Adds one point of {@code entry}'s key. */
  WsUpdate add(long ts, KvEntry entry) {
    data.computeIfAbsent(entry.key(), k -> MAPPER.createArrayNode())
        .addArray()
        .add(ts)
        .add(entry.valueAsString());
    latest.merge(entry.key(), ts, Math::max);
    return this;
  }

  /** Adds a key with no points (a key asked for that has no value yet). */
  WsUpdate addEmpty(String key) {
    data.computeIfAbsent(key, k -> MAPPER.createArrayNode());
    return this;
  }

  boolean isEmpty() {
    return data.isEmpty();
  }

  String json() {
    ObjectNode update = base(subscriptionId, ErrorCode.NO_ERROR, null);
    ObjectNode dataNode = update.putObject("data");
    data.forEach(dataNode::set);
    ObjectNode latestNode = update.putObject("latestValues");
    latest.forEach(latestNode::put);
    return write(update);
  }

  /** An error answer to command {@code cmdId}: no data. */
  static String error(int cmdId, ErrorCode code, String message) {
    ObjectNode update = base(cmdId, code, message);
    update.putNull("data");
    return write(update);
  }

  private static ObjectNode base(int subscriptionId, ErrorCode code, @Nullable String message) {
    ObjectNode update = MAPPER.createObjectNode();
    update.put("subscriptionId", subscriptionId);
    update.put("errorCode", code.code);
    if (message == null) {
      update.putNull("errorMsg");
    } else {
      update.put("errorMsg", message);
    }
    return update;
  }

  private static String write(ObjectNode update) {
    try {
      return MAPPER.writeValueAsString(update);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an update must always serialise", e);
    }
  }
}
