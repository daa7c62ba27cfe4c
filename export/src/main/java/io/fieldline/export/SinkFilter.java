package io.fieldline.export;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.export.sink.InvalidSinkException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Which records a sink takes: {@code deviceTypes} (a device's type is its profile's name), {@code
 * keys} and {@code kinds} ({@code TELEMETRY}, {@code ATTRIBUTES}); each optional, an absent or
 * empty list takes everything. Immutable.
 */
final class SinkFilter {

  private static final Set<String> FIELDS = Set.of("deviceTypes", "keys", "kinds");
  private static final int MAX_ITEMS = 1000;

  private final Set<String> deviceTypes;
  private final Set<String> keys;
  private final Set<String> kinds;

  private SinkFilter(Set<String> deviceTypes, Set<String> keys, Set<String> kinds) {
    this.deviceTypes = deviceTypes;
    this.keys = keys;
    this.kinds = kinds;
  }

  /** Checks a filter as given over REST and returns it in stored form. */
  static ObjectNode validate(ObjectNode filter) throws InvalidSinkException {
    ObjectNode out = JsonNodeFactory.instance.objectNode();
    for (Map.Entry<String, JsonNode> field : filter.properties()) {
      if (!FIELDS.contains(field.getKey())) {
        throw new InvalidSinkException(
            "filter: unknown field '" + field.getKey() + "' (expected deviceTypes, keys, kinds)");
      }
      Set<String> values = strings(field.getKey(), field.getValue());
      if (field.getKey().equals("kinds")) {
        for (String kind : values) {
          if (!kind.equals("TELEMETRY") && !kind.equals("ATTRIBUTES")) {
            throw new InvalidSinkException(
                "filter.kinds: '" + kind + "' is not TELEMETRY or ATTRIBUTES");
          }
        }
      }
      ArrayNode array = out.putArray(field.getKey());
      values.forEach(array::add);
    }
    return out;
  }

  /** Reads a stored (validated) filter. */
  static SinkFilter of(JsonNode stored) {
    return new SinkFilter(
        lenient(stored.get("deviceTypes")),
        lenient(stored.get("keys")),
        lenient(stored.get("kinds")));
  }

  /** Whether records of this device type may pass at all. */
  boolean takesType(String deviceType) {
    return deviceTypes.isEmpty() || deviceTypes.contains(deviceType);
  }

  /** The part of an entry the sink takes (same position and sequence number), or null for none. */
  @Nullable FeedEntry apply(FeedEntry entry) {
    if (entry instanceof FeedEntry.Telemetry telemetry) {
      if (!kinds.isEmpty() && !kinds.contains("TELEMETRY")) {
        return null;
      }
      if (keys.isEmpty()) {
        return entry;
      }
      List<TsKvEntry> kept = new ArrayList<>();
      for (TsKvEntry value : telemetry.entries()) {
        if (keys.contains(value.key())) {
          kept.add(value);
        }
      }
      return kept.isEmpty()
          ? null
          : new FeedEntry.Telemetry(entry.position(), entry.seq(), entry.deviceId(), kept);
    }
    FeedEntry.Attributes attributes = (FeedEntry.Attributes) entry;
    if (!kinds.isEmpty() && !kinds.contains("ATTRIBUTES")) {
      return null;
    }
    if (keys.isEmpty()) {
      return entry;
    }
    List<KvEntry> kept = new ArrayList<>();
    for (KvEntry value : attributes.entries()) {
      if (keys.contains(value.key())) {
        kept.add(value);
      }
    }
    return kept.isEmpty()
        ? null
        : new FeedEntry.Attributes(
            entry.position(),
            entry.seq(),
            entry.deviceId(),
            attributes.scope(),
            attributes.ts(),
            kept);
  }

  private static Set<String> strings(String field, JsonNode node) throws InvalidSinkException {
    if (!node.isArray()) {
      throw new InvalidSinkException("filter." + field + ": expected an array of strings");
    }
    if (node.size() > MAX_ITEMS) {
      throw new InvalidSinkException("filter." + field + ": at most " + MAX_ITEMS + " items");
    }
    Set<String> values = new LinkedHashSet<>();
    for (JsonNode item : node) {
      if (!item.isTextual() || item.asText().isEmpty()) {
        throw new InvalidSinkException("filter." + field + ": expected non-empty strings");
      }
      values.add(item.asText());
    }
    return values;
  }

  private static Set<String> lenient(@Nullable JsonNode node) {
    Set<String> values = new LinkedHashSet<>();
    if (node != null) {
      node.forEach(item -> values.add(item.asText()));
    }
    return Set.copyOf(values);
  }
}
