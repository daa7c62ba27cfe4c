package io.fieldline.common.kv;

/** The storage type of a value, following ThingsBoard's typed columns. */
public enum DataType {
  BOOLEAN,
  LONG,
  DOUBLE,
  STRING,
  /** A nested JSON object or array, kept as its JSON text. */
  JSON
}
