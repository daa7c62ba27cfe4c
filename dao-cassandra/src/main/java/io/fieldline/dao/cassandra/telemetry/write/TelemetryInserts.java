package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TimestampRange;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.cql.BindMarkers;
import io.fieldline.dao.cassandra.cql.ValueColumns;
import java.util.UUID;

/**
 * The prepared inserts a device message becomes, one method per table, each returning the bound
 * statement with its estimated size. Bind markers are found by column name once, here at prepare
 * time ({@link BindMarkers}); binding a value then costs what binding by position did. Only the
 * value column of the value's type is set (see {@link ValueColumns}).
 *
 * <p>Prepared in the constructor (blocking: startup only). Immutable and thread-safe afterwards;
 * called on the device actors' threads.
 */
final class TelemetryInserts {

  // Per-row cost in Cassandra's batch size (partition and clustering keys, timestamps, cell
  // headers); measured: 100 two-key-character rows reported as 7 668 bytes.
  private static final int STATEMENT_OVERHEAD = 64;

  private record TsInsert(
      PreparedStatement statement,
      int deviceId,
      int part,
      int key,
      int ts,
      ValueColumns.Markers values,
      int ttl) {}

  private record LatestUpsert(
      PreparedStatement statement,
      int deviceId,
      int key,
      int ts,
      ValueColumns.Markers values,
      int timestamp) {}

  private record AttributeUpsert(
      PreparedStatement statement,
      int deviceId,
      int scope,
      int key,
      int lastUpdateTs,
      ValueColumns.Markers values,
      int timestamp) {}

  private record PartitionInsert(PreparedStatement statement, int deviceId, int part) {}

  private record KeyPartitionInsert(PreparedStatement statement, int deviceId, int key, int part) {}

  private final TsInsert ts;
  private final LatestUpsert latest;
  private final AttributeUpsert attribute;
  private final PartitionInsert partition;
  private final KeyPartitionInsert keyPartition;
  private final EncodedValues encoded = new EncodedValues();

  /** Prepares the inserts into the tables of {@code keyspace}; blocks. */
  TelemetryInserts(CqlSession session, String keyspace) {
    PreparedStatement insertTs =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".ts_kv (device_id, part, key, ts, "
                + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?");
    ts =
        new TsInsert(
            insertTs,
            BindMarkers.indexOf(insertTs, "device_id"),
            BindMarkers.indexOf(insertTs, "part"),
            BindMarkers.indexOf(insertTs, "key"),
            BindMarkers.indexOf(insertTs, "ts"),
            ValueColumns.Markers.of(insertTs),
            BindMarkers.indexOf(insertTs, BindMarkers.TTL));
    PreparedStatement upsertLatest =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".ts_kv_latest (device_id, key, ts, "
                + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?");
    latest =
        new LatestUpsert(
            upsertLatest,
            BindMarkers.indexOf(upsertLatest, "device_id"),
            BindMarkers.indexOf(upsertLatest, "key"),
            BindMarkers.indexOf(upsertLatest, "ts"),
            ValueColumns.Markers.of(upsertLatest),
            BindMarkers.indexOf(upsertLatest, BindMarkers.TIMESTAMP));
    PreparedStatement upsertAttribute =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".attributes_kv (device_id, scope, key, last_update_ts, "
                + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?");
    attribute =
        new AttributeUpsert(
            upsertAttribute,
            BindMarkers.indexOf(upsertAttribute, "device_id"),
            BindMarkers.indexOf(upsertAttribute, "scope"),
            BindMarkers.indexOf(upsertAttribute, "key"),
            BindMarkers.indexOf(upsertAttribute, "last_update_ts"),
            ValueColumns.Markers.of(upsertAttribute),
            BindMarkers.indexOf(upsertAttribute, BindMarkers.TIMESTAMP));
    PreparedStatement insertPartition =
        session.prepare(
            "INSERT INTO " + keyspace + ".ts_kv_partitions (device_id, part) VALUES (?, ?)");
    partition =
        new PartitionInsert(
            insertPartition,
            BindMarkers.indexOf(insertPartition, "device_id"),
            BindMarkers.indexOf(insertPartition, "part"));
    PreparedStatement insertKeyPartition =
        session.prepare(
            "INSERT INTO " + keyspace + ".ts_kv_keys (device_id, key, part) VALUES (?, ?, ?)");
    keyPartition =
        new KeyPartitionInsert(
            insertKeyPartition,
            BindMarkers.indexOf(insertKeyPartition, "device_id"),
            BindMarkers.indexOf(insertKeyPartition, "key"),
            BindMarkers.indexOf(insertKeyPartition, "part"));
  }

  /**
   * The {@code ts_kv} row of one value, expiring after {@code ttlSeconds} (0: never). The key
   * columns are bound pre-encoded ({@link EncodedValues}): this runs once per stored value.
   */
  SizedStatement timeSeries(UUID deviceId, long part, TsKvEntry entry, int ttlSeconds) {
    BoundStatementBuilder bound =
        ts.statement()
            .boundStatementBuilder()
            .setBytesUnsafe(ts.deviceId(), encoded.device(deviceId))
            .setBytesUnsafe(ts.part(), encoded.part(part))
            .setBytesUnsafe(ts.key(), encoded.key(entry.key()))
            .setBytesUnsafe(ts.ts(), encoded.ts(entry.ts()))
            .setBytesUnsafe(ts.ttl(), encoded.smallInt(ttlSeconds));
    return sized(entry.kv(), ts.values().bind(bound, entry.kv()));
  }

  /**
   * The {@code ts_kv_latest} upsert of a key's newest value, written {@code USING TIMESTAMP
   * ts*1000} so that an older value arriving late never replaces a newer one.
   *
   * @throws ArithmeticException for a timestamp beyond Cassandra's write times
   */
  SizedStatement latest(UUID deviceId, TsKvEntry newest) {
    return latestAt(deviceId, newest, writeTimestamp(newest.ts()));
  }

  /**
   * The {@code ts_kv_latest} upsert of {@code value} written at {@code writeTimeMicros}: a delete
   * puts an older value back in place of a deleted newer one, above the deleted one's write time.
   */
  SizedStatement latestAt(UUID deviceId, TsKvEntry value, long writeTimeMicros) {
    BoundStatementBuilder bound =
        latest
            .statement()
            .boundStatementBuilder()
            .setUuid(latest.deviceId(), deviceId)
            .setString(latest.key(), value.key())
            .setLong(latest.ts(), value.ts())
            .setLong(latest.timestamp(), writeTimeMicros);
    return sized(value.kv(), latest.values().bind(bound, value.kv()));
  }

  /**
   * The {@code attributes_kv} upsert of one attribute updated at {@code ts}, written {@code USING
   * TIMESTAMP ts*1000}.
   *
   * @throws ArithmeticException for a timestamp beyond Cassandra's write times
   */
  SizedStatement attribute(UUID deviceId, AttributeScope scope, KvEntry kv, long ts) {
    BoundStatementBuilder bound =
        attribute
            .statement()
            .boundStatementBuilder()
            .setUuid(attribute.deviceId(), deviceId)
            .setString(attribute.scope(), scope.name())
            .setString(attribute.key(), kv.key())
            .setLong(attribute.lastUpdateTs(), ts)
            .setLong(attribute.timestamp(), writeTimestamp(ts));
    return sized(kv, attribute.values().bind(bound, kv));
  }

  /** The {@code ts_kv_partitions} insert of an index row. */
  SizedStatement partition(IndexRow.Partition row) {
    return new SizedStatement(
        partition
            .statement()
            .boundStatementBuilder()
            .setUuid(partition.deviceId(), row.deviceId())
            .setLong(partition.part(), row.part())
            .build(),
        STATEMENT_OVERHEAD);
  }

  /** The {@code ts_kv_keys} insert of an index row. */
  SizedStatement keyPartition(IndexRow.KeyPartition row) {
    return new SizedStatement(
        keyPartition
            .statement()
            .boundStatementBuilder()
            .setUuid(keyPartition.deviceId(), row.deviceId())
            .setString(keyPartition.key(), row.key())
            .setLong(keyPartition.part(), row.part())
            .build(),
        STATEMENT_OVERHEAD + 2 * row.key().length());
  }

  /**
   * The write time (microseconds) of a value with timestamp {@code tsMillis}: Cassandra resolves
   * concurrent writes of a cell by write time, so using the value's own time makes the newest value
   * win, whatever order the writes arrive in.
   *
   * @throws ArithmeticException outside {@link TimestampRange} (about 292,000 years either side of
   *     1970), which does not fit a microsecond write time; the payload parser refuses the same
   *     range
   */
  static long writeTimestamp(long tsMillis) {
    if (!TimestampRange.contains(tsMillis)) {
      throw new ArithmeticException("timestamp " + tsMillis + " outside the storable range");
    }
    return tsMillis * 1000L;
  }

  private static SizedStatement sized(KvEntry kv, BoundStatementBuilder bound) {
    return new SizedStatement(
        bound.build(), STATEMENT_OVERHEAD + 2 * kv.key().length() + valueBytes(kv));
  }

  // Upper estimate of a value's serialized size (UTF-16 length x 2 covers most UTF-8 text).
  private static int valueBytes(KvEntry kv) {
    if (kv instanceof KvEntry.StringKv) {
      return 2 * ((KvEntry.StringKv) kv).text().length();
    }
    if (kv instanceof KvEntry.JsonKv) {
      return 2 * ((KvEntry.JsonKv) kv).json().length();
    }
    return 8;
  }
}
