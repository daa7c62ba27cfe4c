package io.fieldline.transport.mqtt.gateway;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.fieldline.common.NameRules;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.transport.mqtt.downlink.DownlinkPayloads.ChildAnswer;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Parses what a gateway publishes to read a child's attributes or answer its RPC (ThingsBoard's
 * gateway API):
 *
 * <ul>
 *   <li>{@code v1/gateway/attributes/request}: {@code {"id": 1, "device": "A", "client": true,
 *       "key": "k"}} (one key of one scope: answered with {@code "value"}), {@code "keys": ["k1",
 *       "k2"]} instead of {@code "key"} (answered with {@code "values"}; a list of one key is
 *       answered as {@code "key"} is, an empty list asks for every key of the scope), or {@code
 *       "client": ["k1"], "shared": ["k2"]} (keys per scope, answered per scope; an empty list asks
 *       for every key of its scope, a scope left out is not read);
 *   <li>{@code v1/gateway/rpc}: {@code {"device": "A", "id": 1, "data": {...}}}, {@code data} any
 *       JSON value (the answer the REST caller gets).
 * </ul>
 *
 * {@code id} is an integer (or a string of one, as ThingsBoard reads it), {@code client} a boolean
 * (or its text), {@code device} a device name by the rules of names. Anything else is a {@link
 * PayloadFormatException}. Stateless.
 */
final class ChildRequests {

  // Trailing tokens fail: a second value after the object is not silently dropped.
  private static final ObjectReader READER =
      new ObjectMapper().reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /**
   * A gateway's attribute request for a child.
   *
   * @param id the request's id, echoed in the answer
   * @param device the child's name
   * @param shape the answer's shape, by the request's form
   * @param clientKeys client-side keys wanted: null for none, empty for all
   * @param sharedKeys shared keys wanted: null for none, empty for all
   */
  record AttributeRequest(
      int id,
      String device,
      ChildAnswer shape,
      @Nullable Set<String> clientKeys,
      @Nullable Set<String> sharedKeys) {
    AttributeRequest {
      Objects.requireNonNull(device, "device");
      Objects.requireNonNull(shape, "shape");
    }
  }

  /**
   * A gateway's answer to a server-side RPC to a child.
   *
   * @param device the child's name
   * @param id the request's id, as the gateway received it ({@code data.id})
   * @param data the JSON text of the answer
   */
  record RpcAnswer(String device, int id, String data) {
    RpcAnswer {
      Objects.requireNonNull(device, "device");
      Objects.requireNonNull(data, "data");
    }
  }

  private ChildRequests() {}

  /** Parses a {@code v1/gateway/attributes/request} payload. */
  static AttributeRequest attributeRequest(byte[] payload) {
    JsonNode root = object(payload);
    int id = id(root);
    String device = device(root);
    JsonNode client = root.path("client");
    if (root.has("key") || root.has("keys")) {
      Boolean clientScope = bool(client);
      if (clientScope == null) {
        throw new PayloadFormatException(
            "\"client\" must be true (client-side keys) or false (shared keys)");
      }
      Set<String> keys;
      ChildAnswer shape;
      if (root.has("key")) {
        JsonNode key = root.get("key");
        if (!key.isTextual()) {
          throw new PayloadFormatException("\"key\" must be a string");
        }
        keys = Set.of(key.textValue());
        shape = ChildAnswer.VALUE;
      } else {
        keys = keys(root.get("keys"), "keys");
        shape = keys.size() == 1 ? ChildAnswer.VALUE : ChildAnswer.VALUES;
      }
      return clientScope
          ? new AttributeRequest(id, device, shape, keys, null)
          : new AttributeRequest(id, device, shape, null, keys);
    }
    JsonNode shared = root.path("shared");
    if (!client.isArray() && !shared.isArray()) {
      throw new PayloadFormatException(
          "an attribute request names \"key\" or \"keys\" with \"client\": true/false, or key"
              + " arrays \"client\" and/or \"shared\"");
    }
    return new AttributeRequest(
        id, device, ChildAnswer.SCOPES, scopeKeys(client, "client"), scopeKeys(shared, "shared"));
  }

  /** Parses a {@code v1/gateway/rpc} payload. */
  static RpcAnswer rpcAnswer(byte[] payload) {
    JsonNode root = object(payload);
    String device = device(root);
    int id = id(root);
    JsonNode data = root.get("data");
    if (data == null) {
      throw new PayloadFormatException("an RPC answer has \"data\": the answer");
    }
    return new RpcAnswer(device, id, data.toString());
  }

  private static JsonNode object(byte[] payload) {
    if (payload.length == 0) {
      throw new PayloadFormatException("empty payload");
    }
    JsonNode root;
    try {
      root = READER.readTree(payload);
    } catch (IOException e) {
      // Not the parser's message: it may quote the payload, and the reason is stored and logged.
      throw new PayloadFormatException("not valid JSON", e);
    }
    if (root == null || !root.isObject()) {
      throw new PayloadFormatException("the payload must be a JSON object");
    }
    return root;
  }

  private static int id(JsonNode root) {
    JsonNode id = root.path("id");
    if (id.isIntegralNumber() && id.canConvertToInt()) {
      return id.intValue();
    }
    if (id.isTextual()) {
      try {
        return Integer.parseInt(id.textValue().strip());
      } catch (NumberFormatException notAnInt) {
        // reported below
      }
    }
    throw new PayloadFormatException("\"id\" must be an integer");
  }

  // true or false, or their text (as ThingsBoard reads it); null for anything else.
  private static @Nullable Boolean bool(JsonNode node) {
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isTextual() && ("true".equals(node.textValue()) || "false".equals(node.textValue()))) {
      return Boolean.valueOf(node.textValue());
    }
    return null;
  }

  private static String device(JsonNode root) {
    JsonNode device = root.path("device");
    if (!device.isTextual()) {
      throw new PayloadFormatException("\"device\" must be the device's name, a string");
    }
    String violation = NameRules.violation(device.textValue(), NameRules.MAX_LENGTH);
    if (violation != null) {
      throw new PayloadFormatException("device name " + violation);
    }
    return device.textValue();
  }

  private static @Nullable Set<String> scopeKeys(JsonNode node, String field) {
    if (node.isMissingNode() || node.isNull()) {
      return null;
    }
    return keys(node, field);
  }

  private static Set<String> keys(JsonNode node, String field) {
    if (!node.isArray()) {
      throw new PayloadFormatException("\"" + field + "\" must be an array of key names");
    }
    Set<String> keys = new LinkedHashSet<>();
    for (JsonNode key : node) {
      if (!key.isTextual()) {
        throw new PayloadFormatException("\"" + field + "\" must be an array of key names");
      }
      keys.add(key.textValue());
    }
    return keys;
  }
}
