package io.fieldline.server.rest;

import io.fieldline.common.NameRules;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

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

  /** Most keys in one {@code keys} parameter. */
  static final int MAX_KEYS = 100;

  /** Longest key, device name, type, access token or prefix, in characters. */
  static final int MAX_NAME_LENGTH = NameRules.MAX_LENGTH;

  /** Largest {@code limit} of a history or dead-letter read. */
  static final int MAX_LIMIT = 10_000;

  private RequestParams() {}

  /** A timestamp in {@code [MIN_TS, MAX_TS]}; {@code fallback} when absent (null: required). */
  static long timestamp(Map<String, String> params, String name, Long fallback) {
    return longIn(params, name, fallback, MIN_TS, MAX_TS);
  }

  /** An integer parameter in {@code [min, max]}; {@code fallback} when absent (null: required). */
  static long longIn(Map<String, String> params, String name, Long fallback, long min, long max) {
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

  /** An enum constant named case-insensitively, or the listed choices as the error. */
  static <E extends Enum<E>> E oneOf(
      Map<String, String> params, String name, Class<E> type, E fallback) {
    String value = params.get(name);
    if (value == null) {
      return fallback;
    }
    try {
      return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          name + " must be one of " + java.util.Arrays.toString(type.getEnumConstants()));
    }
  }

  /** A comma-separated key list: at most {@link #MAX_KEYS} keys, each a valid name. */
  static Optional<Set<String>> keys(String param) {
    if (param == null || param.isBlank()) {
      return Optional.empty();
    }
    Set<String> keys = new LinkedHashSet<>();
    for (String key : param.split(",", -1)) {
      if (!key.isBlank()) {
        keys.add(name("key", key.trim()));
      }
      if (keys.size() > MAX_KEYS) {
        throw new IllegalArgumentException("keys must list at most " + MAX_KEYS + " keys");
      }
    }
    return keys.isEmpty() ? Optional.empty() : Optional.of(keys);
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
}
