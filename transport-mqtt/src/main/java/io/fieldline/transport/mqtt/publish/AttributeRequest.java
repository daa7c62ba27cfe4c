package io.fieldline.transport.mqtt.publish;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * An attribute request as a device publishes it on {@code v1/devices/me/attributes/request/{id}}:
 * {@code {"clientKeys": "a,b", "sharedKeys": "c,d"}}, each a comma-separated string (ThingsBoard's
 * form) or a JSON array of strings. Names are trimmed; empty ones are skipped. Immutable.
 *
 * @param clientKeys the client-scope keys asked for, null when none were given
 * @param sharedKeys the shared-scope keys asked for, null when none were given
 */
record AttributeRequest(@Nullable Set<String> clientKeys, @Nullable Set<String> sharedKeys) {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Whether neither scope named keys: every client and every shared attribute is wanted. */
  boolean everything() {
    return clientKeys == null && sharedKeys == null;
  }

  /**
   * Reads a request; an empty payload asks for everything.
   *
   * @throws IllegalArgumentException with the answer's error text, if it is not such a request
   */
  static AttributeRequest parse(byte[] payload) {
    JsonNode root;
    try {
      root = payload.length == 0 ? MAPPER.createObjectNode() : MAPPER.readTree(payload);
    } catch (IOException e) {
      throw new IllegalArgumentException("request is not valid JSON");
    }
    if (root == null || root.isMissingNode()) {
      root = MAPPER.createObjectNode(); // only whitespace
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException("request must be a JSON object");
    }
    return new AttributeRequest(keys(root, "clientKeys"), keys(root, "sharedKeys"));
  }

  private static @Nullable Set<String> keys(JsonNode root, String field) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      return null;
    }
    Set<String> keys = new LinkedHashSet<>();
    if (node.isTextual()) {
      for (String key : node.asText().split(",")) {
        add(keys, key);
      }
    } else if (node.isArray()) {
      for (JsonNode element : node) {
        if (!element.isTextual()) {
          throw new IllegalArgumentException(field + " must be a string or an array of strings");
        }
        add(keys, element.asText());
      }
    } else {
      throw new IllegalArgumentException(field + " must be a string or an array of strings");
    }
    return keys.isEmpty() ? null : keys;
  }

  private static void add(Set<String> keys, String key) {
    String trimmed = key.strip();
    if (!trimmed.isEmpty()) {
      keys.add(trimmed);
    }
  }
}
