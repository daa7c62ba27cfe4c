package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TsKvEntry;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** ThingsBoard-shaped JSON for the REST API's responses. Stateless. */
final class JsonViews {

  static final ObjectMapper MAPPER = new ObjectMapper();

  private JsonViews() {}

  /** {@code {"entityType":"DEVICE","id":"<uuid>"}}, ThingsBoard's entity id. */
  static ObjectNode deviceId(DeviceId id) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("entityType", "DEVICE");
    node.put("id", id.toString());
    return node;
  }

  static ObjectNode device(Device device) {
    ObjectNode node = MAPPER.createObjectNode();
    node.set("id", deviceId(device.id()));
    node.put("createdTime", device.createdTime());
    node.put("name", device.name());
    node.put("type", device.type());
    node.putNull("label");
    return node;
  }

  /** ThingsBoard's page shape: {@code {"data":[...],"hasNext":..}}. */
  static ObjectNode page(List<Device> devices, boolean hasNext) {
    ObjectNode node = MAPPER.createObjectNode();
    ArrayNode data = node.putArray("data");
    devices.forEach(device -> data.add(device(device)));
    node.put("hasNext", hasNext);
    return node;
  }

  /**
   * {@code {"key":[{"ts":..,"value":..}, ...]}}; values are strings unless {@code strict} (as
   * ThingsBoard's {@code useStrictDataTypes}).
   */
  static ObjectNode timeseries(Collection<TsKvEntry> entries, boolean strict) {
    Map<String, ArrayNode> byKey = new LinkedHashMap<>();
    ObjectNode node = MAPPER.createObjectNode();
    for (TsKvEntry entry : entries) {
      ArrayNode values = byKey.computeIfAbsent(entry.key(), node::putArray);
      ObjectNode point = values.addObject();
      point.put("ts", entry.ts());
      putValue(point, "value", entry.kv(), strict);
    }
    return node;
  }

  /** {@code [{"key":..,"value":..,"lastUpdateTs":..}]}, ThingsBoard's attribute list. */
  static ArrayNode attributes(Collection<AttributeKvEntry> entries) {
    ArrayNode array = MAPPER.createArrayNode();
    for (AttributeKvEntry entry : entries) {
      ObjectNode node = array.addObject();
      node.put("key", entry.key());
      putValue(node, "value", entry.kv(), true);
      node.put("lastUpdateTs", entry.lastUpdateTs());
    }
    return array;
  }

  static ObjectNode error(int status, String message) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("status", status);
    node.put("message", message);
    node.put("timestamp", System.currentTimeMillis());
    return node;
  }

  private static void putValue(ObjectNode node, String field, KvEntry kv, boolean strict) {
    if (!strict) {
      node.put(field, kv.valueAsString());
      return;
    }
    if (kv instanceof KvEntry.BooleanKv b) {
      node.put(field, b.bool());
    } else if (kv instanceof KvEntry.LongKv l) {
      node.put(field, l.number());
    } else if (kv instanceof KvEntry.DoubleKv d) {
      node.put(field, d.number());
    } else {
      // Strings, and JSON kept as its text (as ThingsBoard returns json_v values).
      node.put(field, kv.valueAsString());
    }
  }
}
