package io.fieldline.dao.cassandra.cql;

import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.kv.KvEntry;
import org.jspecify.annotations.Nullable;

/**
 * The typed value columns {@code bool_v, long_v, dbl_v, str_v, json_v} shared by {@code ts_kv},
 * {@code ts_kv_latest} and {@code attributes_kv}.
 *
 * <p>Writes set only the column of the value's type and leave the others <em>unset</em> (protocol
 * v4+), so no tombstones are written. A row whose key changed type therefore keeps the old column
 * too; readers of overwritten rows ({@code ts_kv_latest}, {@code attributes_kv}) also select the
 * columns' write times and take the newest cell. Stateless.
 */
public final class ValueColumns {

  /**
   * The value columns, in the order {@link #SELECT} and {@link #SELECT_WITH_WRITETIME} list them.
   */
  public static final String COLUMNS = "bool_v, long_v, dbl_v, str_v, json_v";

  /** The value columns for a SELECT list. */
  public static final String SELECT = COLUMNS;

  /** The value columns followed by their write times, for a SELECT list. */
  public static final String SELECT_WITH_WRITETIME =
      COLUMNS
          + ", writetime(bool_v), writetime(long_v), writetime(dbl_v), writetime(str_v),"
          + " writetime(json_v)";

  private static final int COUNT = 5;

  private ValueColumns() {}

  /**
   * Where the five value columns sit among the bind markers of a prepared insert, found by column
   * name once (see {@link BindMarkers}).
   *
   * @param boolV position of {@code bool_v}
   * @param longV position of {@code long_v}
   * @param dblV position of {@code dbl_v}
   * @param strV position of {@code str_v}
   * @param jsonV position of {@code json_v}
   */
  public record Markers(int boolV, int longV, int dblV, int strV, int jsonV) {

    /** The positions of the value columns in {@code insert}. */
    public static Markers of(PreparedStatement insert) {
      return new Markers(
          BindMarkers.indexOf(insert, "bool_v"),
          BindMarkers.indexOf(insert, "long_v"),
          BindMarkers.indexOf(insert, "dbl_v"),
          BindMarkers.indexOf(insert, "str_v"),
          BindMarkers.indexOf(insert, "json_v"));
    }

    /** Sets the column matching the value's type and leaves the other four unset. */
    public BoundStatementBuilder bind(BoundStatementBuilder builder, KvEntry kv) {
      if (kv instanceof KvEntry.BooleanKv bool) {
        return builder.setBoolean(boolV, bool.bool());
      } else if (kv instanceof KvEntry.LongKv number) {
        return builder.setLong(longV, number.number());
      } else if (kv instanceof KvEntry.DoubleKv number) {
        return builder.setDouble(dblV, number.number());
      } else if (kv instanceof KvEntry.StringKv text) {
        return builder.setString(strV, text.text());
      } else {
        return builder.setString(jsonV, ((KvEntry.JsonKv) kv).json());
      }
    }
  }

  /**
   * Reads the value whose columns start at {@code first}; with {@code withWritetime} the five write
   * times follow the five values and the newest non-null cell wins, else the first non-null one.
   *
   * @return the value, or null if every column is null
   */
  public static @Nullable KvEntry read(Row row, int first, String key, boolean withWritetime) {
    int best = -1;
    long bestTime = Long.MIN_VALUE;
    for (int i = 0; i < COUNT; i++) {
      if (row.isNull(first + i)) {
        continue;
      }
      if (!withWritetime) {
        best = i;
        break;
      }
      long time = row.isNull(first + COUNT + i) ? Long.MIN_VALUE : row.getLong(first + COUNT + i);
      if (best < 0 || time > bestTime) {
        best = i;
        bestTime = time;
      }
    }
    int column = first + best;
    switch (best) {
      case -1:
        return null;
      case 0:
        return KvEntry.of(key, row.getBoolean(column));
      case 1:
        return KvEntry.of(key, row.getLong(column));
      case 2:
        return KvEntry.of(key, row.getDouble(column));
      case 3:
        return KvEntry.of(key, row.getString(column));
      default:
        return KvEntry.json(key, row.getString(column));
    }
  }
}
