package io.fieldline.server.rest;

import io.fieldline.common.NameRules;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.SortOrder;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The validation rules of docs/rest-api.md for query parameters and names, applied before a value
 * reaches arithmetic or storage. Each rule throws {@link IllegalArgumentException} with a message
 * for the client, which {@link HttpJson#failure} turns into 400. Stateless.
 */
final class RequestParams {

  /** Earliest timestamp accepted: the epoch. */
  static final long MIN_TS = 0L;

  /** Latest timestamp accepted: 9999-12-31T23:59:59.999Z, in epoch milliseconds. */
  static final long MAX_TS = 253_402_300_799_999L;

  /** Most keys in one {@code keys} parameter (a URL is at most 2,048 characters anyway). */
  static final int MAX_KEYS = 100;

  /** Most attributes in one save request. */
  static final int MAX_ATTRIBUTES = 1000;

  /** Longest key, device name, type, access token or prefix, in characters. */
  static final int MAX_NAME_LENGTH = NameRules.MAX_LENGTH;

  /** Largest {@code pageSize} of a device listing. */
  static final int MAX_PAGE_SIZE = 1000;

  private RequestParams() {}

  /** A timestamp in {@code [MIN_TS, MAX_TS]}; {@code fallback} when absent (null: required). */
  static long timestamp(Map<String, String> params, String name, @Nullable Long fallback) {
    return longIn(params, name, fallback, MIN_TS, MAX_TS);
  }

  /** Whether {@code text} is a UUID in its canonical 36-character form. */
  static boolean isUuid(String text) {
    try {
      // UUID.fromString accepts short forms like "1-1-1-1-1"; Pekko's path matcher does not.
      return text.length() == 36 && UUID.fromString(text) != null;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** An integer parameter in {@code [min, max]}; {@code fallback} when absent (null: required). */
  static long longIn(
      Map<String, String> params, String name, @Nullable Long fallback, long min, long max) {
    String value = params.get(name);
    if (value == null) {
      if (fallback == null) {
        throw new IllegalArgumentException(name + " is required");
      }
      return fallback;
    }
    long parsed;
    try {
      parsed = Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be an integer in " + min + ".." + max);
    }
    if (parsed < min || parsed > max) {
      throw new IllegalArgumentException(name + " must be in " + min + ".." + max);
    }
    return parsed;
  }

  /** {@code true} or {@code false}, case-insensitive; {@code fallback} when absent. */
  static boolean flag(Map<String, String> params, String name, boolean fallback) {
    String value = params.get(name);
    if (value == null) {
      return fallback;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(name + " must be true or false");
    };
  }

  /** An enum constant named case-insensitively, or the listed choices as the error. */
  static <E extends Enum<E>> E oneOf(
      Map<String, String> params, String name, Class<E> type, E fallback) {
    return oneOf(params, name, type).orElse(fallback);
  }

  /** Like {@link #oneOf(Map, String, Class, Enum)}, empty when the parameter is absent. */
  static <E extends Enum<E>> Optional<E> oneOf(
      Map<String, String> params, String name, Class<E> type) {
    String value = params.get(name);
    if (value == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          name + " must be one of " + java.util.Arrays.toString(type.getEnumConstants()));
    }
  }

  /** A comma-separated key list: at most {@link #MAX_KEYS} keys, each a valid name. */
  static Optional<Set<String>> keys(@Nullable String param) {
    return keys(param, MAX_KEYS);
  }

  /** A comma-separated key list: at most {@code maxKeys} keys, each a valid name. */
  static Optional<Set<String>> keys(@Nullable String param, int maxKeys) {
    if (param == null || param.isBlank()) {
      return Optional.empty();
    }
    Set<String> keys = new LinkedHashSet<>();
    for (String key : param.split(",", -1)) {
      if (!key.isBlank()) {
        keys.add(name("key", key.trim()));
      }
      if (keys.size() > maxKeys) {
        throw new IllegalArgumentException("keys must list at most " + maxKeys + " keys");
      }
    }
    return keys.isEmpty() ? Optional.empty() : Optional.of(keys);
  }

  /** Like {@link #keys}, for a call that changes values: at least one key is required. */
  static Set<String> requiredKeys(@Nullable String param) {
    return keys(param).orElseThrow(() -> new IllegalArgumentException("keys is required"));
  }

  /**
   * A name: 1..{@link #MAX_NAME_LENGTH} characters, not blank, no control characters or unpaired
   * surrogates.
   */
  static String name(String what, String value) {
    return prefix(what, value, MAX_NAME_LENGTH);
  }

  /** Like {@link #name} with a smaller length bound (a prefix leaves room for its suffix). */
  static String prefix(String what, String value, int maxLength) {
    String violation = NameRules.violation(value, maxLength);
    if (violation != null) {
      throw new IllegalArgumentException(what + " " + violation);
    }
    return value;
  }

  /**
   * ThingsBoard's listing parameters: {@code pageSize} (required, 1..{@link #MAX_PAGE_SIZE}),
   * {@code page} (from 0, default 0; {@code page × pageSize} at most {@link Integer#MAX_VALUE}),
   * {@code textSearch} (a name), {@code sortProperty} ({@code name}, default; {@code createdTime},
   * {@code type}, {@code label}) and {@code sortOrder} ({@code ASC}, default, or {@code DESC}).
   * ThingsBoard's {@code type} filter is refused unless empty: listing all devices instead would be
   * a wrong answer.
   */
  static DevicePageQuery devicePage(Map<String, String> params) {
    int pageSize = (int) longIn(params, "pageSize", null, 1, MAX_PAGE_SIZE);
    int page = (int) longIn(params, "page", 0L, 0, Integer.MAX_VALUE);
    if ((long) page * pageSize > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("page * pageSize must be at most " + Integer.MAX_VALUE);
    }
    String type = params.get("type");
    if (type != null && !type.isBlank()) {
      throw new IllegalArgumentException("filtering the device list by type is not supported");
    }
    Optional<String> textSearch =
        Optional.ofNullable(params.get("textSearch"))
            .filter(text -> !text.isBlank())
            .map(text -> name("textSearch", text));
    return new DevicePageQuery(
        pageSize,
        page,
        textSearch,
        sortProperty(params.get("sortProperty")),
        oneOf(params, "sortOrder", SortOrder.class, SortOrder.ASC));
  }

  private static DevicePageQuery.SortProperty sortProperty(@Nullable String value) {
    if (value == null || value.isBlank()) {
      return DevicePageQuery.SortProperty.NAME;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "name" -> DevicePageQuery.SortProperty.NAME;
      case "createdtime" -> DevicePageQuery.SortProperty.CREATED_TIME;
      case "type" -> DevicePageQuery.SortProperty.TYPE;
      case "label" -> DevicePageQuery.SortProperty.LABEL;
      default ->
          throw new IllegalArgumentException(
              "sortProperty must be one of name, createdTime, type, label");
    };
  }
}
