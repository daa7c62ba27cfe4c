package io.fieldline.transport.mqtt.downlink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.KvEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The JSON the server sends to devices and gateways, in ThingsBoard's shapes. Values are typed as
 * stored: a long or double is a JSON number, a boolean a JSON boolean, a string a JSON string, a
 * JSON value the object or array itself. Stateless and thread-safe.
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

  /** How a gateway asked for a child's attributes, which decides the answer's shape. */
  public enum ChildAnswer {
    /** One key ({@code "key"}): {@code "value": v}, left out when the key has no value. */
    VALUE,
    /** A list of keys ({@code "keys"}): {@code "values": {...}}, left out when none has a value. */
    VALUES,
    /**
     * Keys per scope ({@code "client": [...]}, {@code "shared": [...]}): {@code "client": {...},
     * "shared": {...}}, a scope with no value left out.
     */
    SCOPES
  }

  /** A child's shared-attribute push to its gateway: {@code {"device": name, "data": {...}}}. */
  static byte[] childUpdated(String device, List<AttributeKvEntry> entries) {
    return bytes(child(device, "data", values(entries)));
  }

  /** A child's shared-attribute delete: {@code {"device": name, "data": {"deleted": [...]}}}. */
  static byte[] childDeleted(String device, List<String> keys) {
    ObjectNode data = MAPPER.createObjectNode();
    ArrayNode deleted = data.putArray("deleted");
    keys.forEach(deleted::add);
    return bytes(child(device, "data", data));
  }

  /**
   * A server-side RPC request to a child, for its gateway: {@code {"device": name, "data": {"id":
   * n, "method": ..., "params": ...}}}.
   */
  static byte[] childRpcRequest(String device, int requestId, String method, String paramsJson) {
    ObjectNode data = MAPPER.createObjectNode();
    data.put("id", requestId);
    data.put("method", method);
    data.set("params", jsonOrText(paramsJson));
    return bytes(child(device, "data", data));
  }

  /**
   * The answer to a gateway's attribute request for a child: {@code {"id": n, "device": name,
   * ...}}, the values in the {@code shape} the request asked for.
   */
  public static byte[] childAttributes(
      int requestId,
      String device,
      ChildAnswer shape,
      List<AttributeKvEntry> client,
      List<AttributeKvEntry> shared) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("id", requestId);
    root.put("device", device);
    switch (shape) {
      case VALUE -> {
        List<AttributeKvEntry> found = client.isEmpty() ? shared : client;
        if (!found.isEmpty()) {
          root.set("value", value(found.get(0).kv()));
        }
      }
      case VALUES -> {
        if (!client.isEmpty() || !shared.isEmpty()) {
          ObjectNode values = values(client);
          values.setAll(values(shared));
          root.set("values", values);
        }
      }
      case SCOPES -> {
        if (!client.isEmpty()) {
          root.set("client", values(client));
        }
        if (!shared.isEmpty()) {
          root.set("shared", values(shared));
        }
      }
    }
    return bytes(root);
  }

  /** An error answer to a gateway's request for a child: {@code {"id", "device", "error"}}. */
  public static byte[] childError(int requestId, String device, String message) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("id", requestId);
    root.put("device", device);
    root.put("error", message);
    return bytes(root);
  }

  /** An error answer: {@code {"error": "..."}}. */
  public static byte[] error(String message) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("error", message);
    return bytes(root);
  }

  private static ObjectNode child(String device, String field, JsonNode value) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("device", device);
    root.set(field, value);
    return root;
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
