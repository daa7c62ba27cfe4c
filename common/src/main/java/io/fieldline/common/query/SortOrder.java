package io.fieldline.common.query;

/**
 * Order of history results by timestamp; ThingsBoard's {@code orderBy}, newest first by default.
 */
public enum SortOrder {
  ASC,
  DESC
}
