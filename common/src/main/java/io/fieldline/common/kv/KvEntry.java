package io.fieldline.common.kv;

import java.util.Objects;

/**
 * One typed key/value pair. Exactly one of the value types ThingsBoard stores: boolean, long,
 * double, string, or JSON text for nested objects and arrays.
 */
public sealed interface KvEntry {

  String key();

  DataType type();

  /**
   * The value as a Java object ({@link Boolean}, {@link Long}, {@link Double} or {@link String}).
   */
  Object value();

  /** The value as ThingsBoard renders it in REST responses (a string). */
  default String valueAsString() {
    return String.valueOf(value());
  }

  static KvEntry of(String key, boolean value) {
    return new BooleanKv(key, value);
  }

  static KvEntry of(String key, long value) {
    return new LongKv(key, value);
  }

  static KvEntry of(String key, double value) {
    return new DoubleKv(key, value);
  }

  static KvEntry of(String key, String value) {
    return new StringKv(key, value);
  }

  static KvEntry json(String key, String jsonText) {
    return new JsonKv(key, jsonText);
  }

  /** A boolean value. */
  record BooleanKv(String key, boolean bool) implements KvEntry {
    public BooleanKv {
      Objects.requireNonNull(key, "key");
    }

    @Override
    public DataType type() {
      return DataType.BOOLEAN;
    }

    @Override
    public Object value() {
      return bool;
    }
  }

  /** An integral value that fits a signed 64-bit long. */
  record LongKv(String key, long number) implements KvEntry {
    public LongKv {
      Objects.requireNonNull(key, "key");
    }

    @Override
    public DataType type() {
      return DataType.LONG;
    }

    @Override
    public Object value() {
      return number;
    }
  }

  /** A floating-point value. */
  record DoubleKv(String key, double number) implements KvEntry {
    public DoubleKv {
      Objects.requireNonNull(key, "key");
    }

    @Override
    public DataType type() {
      return DataType.DOUBLE;
    }

    @Override
    public Object value() {
      return number;
    }
  }

  /** A string value. */
  record StringKv(String key, String text) implements KvEntry {
    public StringKv {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(text, "text");
    }

    @Override
    public DataType type() {
      return DataType.STRING;
    }

    @Override
    public Object value() {
      return text;
    }
  }

  /** A nested JSON object or array, kept as compact JSON text. */
  record JsonKv(String key, String json) implements KvEntry {
    public JsonKv {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(json, "json");
    }

    @Override
    public DataType type() {
      return DataType.JSON;
    }

    @Override
    public Object value() {
      return json;
    }
  }
}
