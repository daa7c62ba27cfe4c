package io.fieldline.server.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.query.PageData;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

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

  /**
   * ThingsBoard's device: {@code {"id":{..},"createdTime":..,"name":..,"type":..,"label":..,
   * "additionalInfo":{..}}}, label and additional info null when the device has none.
   */
  static ObjectNode device(Device device) {
    ObjectNode node = MAPPER.createObjectNode();
    node.set("id", deviceId(device.id()));
    node.put("createdTime", device.createdTime());
    node.put("name", device.name());
    node.put("type", device.type());
    node.put("label", device.label());
    node.set("additionalInfo", jsonOrText(device.additionalInfoJson()));
    return node;
  }

  /**
   * ThingsBoard's device with its {@code deviceProfileId} ({@code {"entityType":"DEVICE_PROFILE",
   * "id":..}}, null when the device has no profile).
   */
  static ObjectNode device(Device device, @Nullable DeviceProfileId profile) {
    ObjectNode node = device(device);
    node.set("deviceProfileId", profile == null ? MAPPER.nullNode() : deviceProfileId(profile));
    return node;
  }

  /** ThingsBoard's page: {@code {"data":[...],"totalPages":..,"totalElements":..,"hasNext":..}}. */
  static ObjectNode devicePage(PageData<Device> page) {
    return page(page, JsonViews::device);
  }

  /** A page of devices, each with its profile (null for those not in {@code profiles}). */
  static ObjectNode devicePage(PageData<Device> page, Map<DeviceId, DeviceProfileId> profiles) {
    return page(page, device -> device(device, profiles.get(device.id())));
  }

  /** ThingsBoard's page of {@code view}s of the items. */
  static <T> ObjectNode page(PageData<T> page, Function<T, JsonNode> view) {
    ObjectNode node = MAPPER.createObjectNode();
    ArrayNode data = node.putArray("data");
    page.data().forEach(item -> data.add(view.apply(item)));
    node.put("totalPages", page.totalPages());
    node.put("totalElements", page.totalElements());
    node.put("hasNext", page.hasNext());
    return node;
  }

  /** {@code {"entityType":"DEVICE_PROFILE","id":"<uuid>"}}, ThingsBoard's entity id. */
  static ObjectNode deviceProfileId(DeviceProfileId id) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("entityType", "DEVICE_PROFILE");
    node.put("id", id.toString());
    return node;
  }

  /**
   * ThingsBoard's device profile: its fields, and {@code profileData} with the configuration types
   * and {@code provisionConfiguration}. The provision secret is only ever shown as {@code
   * secretShown}: the one a create or update was just given (its answer echoes it), null on reads
   * (only a hash is kept). ThingsBoard's rule chain, dashboard, queue, image and firmware fields
   * are present and null.
   */
  static ObjectNode deviceProfile(DeviceProfile profile, @Nullable String secretShown) {
    ObjectNode node = MAPPER.createObjectNode();
    node.set("id", deviceProfileId(profile.id()));
    node.put("createdTime", profile.createdTime());
    node.put("name", profile.name());
    node.put("description", profile.description());
    node.put("type", profile.type());
    node.put("transportType", profile.transportType());
    node.put("provisionType", profile.provisionType().name());
    node.put("provisionDeviceKey", profile.provisionDeviceKey());
    node.put("default", profile.isDefault());
    ObjectNode data = node.putObject("profileData");
    data.putObject("configuration").put("type", "DEFAULT");
    data.putObject("transportConfiguration").put("type", profile.transportType());
    ObjectNode provision = data.putObject("provisionConfiguration");
    provision.put("type", profile.provisionType().name());
    provision.put("provisionDeviceSecret", secretShown);
    data.putNull("alarms");
    for (String absent :
        new String[] {
          "defaultRuleChainId",
          "defaultDashboardId",
          "defaultQueueName",
          "image",
          "firmwareId",
          "softwareId"
        }) {
      node.putNull(absent);
    }
    return node;
  }

  /** {@code ["a","b"]}: a list of keys. */
  static ArrayNode strings(Collection<String> values) {
    ArrayNode array = MAPPER.createArrayNode();
    values.forEach(array::add);
    return array;
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
    } else if (kv instanceof KvEntry.JsonKv json) {
      // As JSON, the way ThingsBoard renders json_v values with strict types.
      node.set(field, jsonOrText(json.json()));
    } else {
      node.put(field, kv.valueAsString());
    }
  }

  /** The JSON {@code text} holds; null for null; the text itself if it is not JSON. */
  private static JsonNode jsonOrText(@Nullable String text) {
    if (text == null) {
      return MAPPER.nullNode();
    }
    try {
      JsonNode json = MAPPER.readTree(text);
      return json == null || json.isMissingNode() ? MAPPER.getNodeFactory().textNode(text) : json;
    } catch (JsonProcessingException e) {
      return MAPPER.getNodeFactory().textNode(text);
    }
  }
}
