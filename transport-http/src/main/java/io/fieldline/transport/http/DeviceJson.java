package io.fieldline.transport.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.ToDeviceRpc;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;

/**
 * The JSON the HTTP device API answers with, in ThingsBoard's shapes, values typed as stored (the
 * same rendering the MQTT downlink uses): a long or double is a JSON number, a boolean a JSON
 * boolean, a string a JSON string, a stored JSON value the object or array itself. Stateless.
 */
final class DeviceJson {

  static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory NODES = MAPPER.getNodeFactory();

  private DeviceJson() {}

  /** 200 with {@code body}. */
  static HttpResponse ok(JsonNode body) {
    return HttpResponse.create()
        .withStatus(StatusCodes.OK)
        .withEntity(
            ContentTypes.APPLICATION_JSON, body.toString().getBytes(StandardCharsets.UTF_8));
  }

  /**
   * An attribute read's answer: {@code {"client": {...}, "shared": {...}}}, a scope with nothing
   * found left out, as ThingsBoard leaves it out.
   */
  static ObjectNode attributes(List<AttributeKvEntry> client, List<AttributeKvEntry> shared) {
    ObjectNode root = MAPPER.createObjectNode();
    if (!client.isEmpty()) {
      root.set("client", values(client));
    }
    if (!shared.isEmpty()) {
      root.set("shared", values(shared));
    }
    return root;
  }

  /** A shared-attribute update: {@code {"key": value, ...}}. */
  static ObjectNode values(List<AttributeKvEntry> entries) {
    ObjectNode values = MAPPER.createObjectNode();
    for (AttributeKvEntry entry : entries) {
      values.set(entry.key(), value(entry.kv()));
    }
    return values;
  }

  /** Shared attributes deleted: {@code {"deleted": ["key", ...]}}. */
  static ObjectNode deleted(List<String> keys) {
    ObjectNode root = MAPPER.createObjectNode();
    ArrayNode deleted = root.putArray("deleted");
    keys.forEach(deleted::add);
    return root;
  }

  /** A server-side RPC request for a poll: {@code {"id": n, "method": ..., "params": ...}}. */
  static ObjectNode rpcRequest(int id, ToDeviceRpc rpc) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("id", id);
    root.put("method", rpc.method());
    root.set("params", jsonOrText(rpc.paramsJson()));
    return root;
  }

  private static JsonNode value(KvEntry kv) {
    if (kv instanceof KvEntry.BooleanKv b) {
      return NODES.booleanNode(b.bool());
    }
    if (kv instanceof KvEntry.LongKv l) {
      return NODES.numberNode(l.number());
    }
    if (kv instanceof KvEntry.DoubleKv d) {
      // JSON has no NaN or infinity: such a double goes out as its text.
      return Double.isFinite(d.number())
          ? NODES.numberNode(d.number())
          : NODES.textNode(Double.toString(d.number()));
    }
    if (kv instanceof KvEntry.JsonKv j) {
      return jsonOrText(j.json());
    }
    return NODES.textNode(kv.valueAsString());
  }

  private static JsonNode jsonOrText(String json) {
    try {
      JsonNode node = MAPPER.readTree(json);
      return node == null || node.isMissingNode() ? NODES.textNode(json) : node;
    } catch (IOException e) {
      return NODES.textNode(json);
    }
  }
}
