package io.fieldline.transport.mqtt.downlink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.KvEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The JSON the server sends to devices, in ThingsBoard's shapes. Values are typed as stored: a long
 * or double is a JSON number, a boolean a JSON boolean, a string a JSON string, a JSON value the
 * object or array itself. Stateless and thread-safe.
 */
public final class DownlinkPayloads {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private DownlinkPayloads() {}

  /** A shared-attribute push: {@code {"key": value, ...}}. */
  static byte[] updated(List<AttributeKvEntry> entries) {
    return bytes(values(entries));
  }

  /** A shared-attribute delete: {@code {"deleted": ["key", ...]}}. */
  static byte[] deleted(List<String> keys) {
    ObjectNode root = MAPPER.createObjectNode();
    ArrayNode deleted = root.putArray("deleted");
    keys.forEach(deleted::add);
    return bytes(root);
  }

  /**
   * A server-side RPC request: {@code {"method": ..., "params": ...}}. Params that are not JSON
   * (the callers validate them; this is the last guard) are sent as a JSON string.
   */
  static byte[] rpcRequest(String method, String paramsJson) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("method", method);
    root.set("params", jsonOrText(paramsJson));
    return bytes(root);
  }

  /**
   * The answer to an attribute request: {@code {"client": {...}, "shared": {...}}}; a scope with no
   * value is left out, as ThingsBoard leaves it out ({@code {}} when nothing was found).
   */
  public static byte[] attributes(List<AttributeKvEntry> client, List<AttributeKvEntry> shared) {
    ObjectNode root = MAPPER.createObjectNode();
    if (!client.isEmpty()) {
      root.set("client", values(client));
    }
    if (!shared.isEmpty()) {
      root.set("shared", values(shared));
    }
    return bytes(root);
  }

  /** An error answer: {@code {"error": "..."}}. */
  public static byte[] error(String message) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("error", message);
    return bytes(root);
  }

  private static ObjectNode values(List<AttributeKvEntry> entries) {
    ObjectNode values = MAPPER.createObjectNode();
    for (AttributeKvEntry entry : entries) {
      values.set(entry.key(), value(entry.kv()));
    }
    return values;
  }

  private static JsonNode value(KvEntry kv) {
    if (kv instanceof KvEntry.BooleanKv b) {
      return MAPPER.getNodeFactory().booleanNode(b.bool());
    }
    if (kv instanceof KvEntry.LongKv l) {
      return MAPPER.getNodeFactory().numberNode(l.number());
    }
    if (kv instanceof KvEntry.DoubleKv d) {
      // JSON has no NaN or infinity: such a double goes out as its text.
      return Double.isFinite(d.number())
          ? MAPPER.getNodeFactory().numberNode(d.number())
          : MAPPER.getNodeFactory().textNode(Double.toString(d.number()));
    }
    if (kv instanceof KvEntry.JsonKv j) {
      return jsonOrText(j.json());
    }
    return MAPPER.getNodeFactory().textNode(kv.valueAsString());
  }

  private static JsonNode jsonOrText(String json) {
    try {
      JsonNode node = MAPPER.readTree(json);
      return node == null || node.isMissingNode() ? MAPPER.getNodeFactory().textNode(json) : node;
    } catch (IOException e) {
      return MAPPER.getNodeFactory().textNode(json);
    }
  }

  private static byte[] bytes(JsonNode node) {
    return node.toString().getBytes(StandardCharsets.UTF_8);
  }
}
