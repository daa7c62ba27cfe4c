package io.fieldline.dao.cassandra.telemetry.write;

import java.util.UUID;

/**
 * A row of one of the two indexes the store keeps beside {@code ts_kv}: which time buckets a device
 * has ({@code ts_kv_partitions}, for history reads) and which buckets hold each key ({@code
 * ts_kv_keys}, for keys and latest values). Each is written once per process ({@link
 * SeenIndexRows}), with the first message that needs it. Immutable values, used as map keys.
 */
sealed interface IndexRow {

  /** The index table a row belongs to; all rows of one device in one table share a partition. */
  enum Table {
    TS_KV_PARTITIONS,
    TS_KV_KEYS
  }

  /** Its table. */
  Table table();

  /** The insert that writes this row. */
  SizedStatement insert(TelemetryInserts inserts);

  /** A {@code ts_kv_partitions} row: the device has values in bucket {@code part}. */
  record Partition(UUID deviceId, long part) implements IndexRow {

    @Override
    public Table table() {
      return Table.TS_KV_PARTITIONS;
    }

    @Override
    public SizedStatement insert(TelemetryInserts inserts) {
      return inserts.partition(this);
    }
  }

  /** A {@code ts_kv_keys} row: the device has values of {@code key} in bucket {@code part}. */
  record KeyPartition(UUID deviceId, String key, long part) implements IndexRow {

    @Override
    public Table table() {
      return Table.TS_KV_KEYS;
    }

    @Override
    public SizedStatement insert(TelemetryInserts inserts) {
      return inserts.keyPartition(this);
    }
  }
}
