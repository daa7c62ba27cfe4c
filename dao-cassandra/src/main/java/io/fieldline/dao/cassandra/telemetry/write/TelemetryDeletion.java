package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TimestampRange;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.TsPartitioning;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteRunner;
import io.fieldline.dao.cassandra.telemetry.read.LatestValuesReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Deletes of attributes and of time-series values in a time range (ThingsBoard's {@code DELETE
 * .../timeseries/delete}), with the latest values kept right.
 *
 * <p>A key's values with {@code startTs <= ts < endTs} go by one range delete per bucket that may
 * hold them (those of {@code ts_kv_partitions} and of the key's {@code ts_kv_keys} rows in the
 * range, so a bucket missing from one index is still cleared). The key's index row of a bucket
 * wholly inside the range goes too, unless the bucket is the current one or later: a node whose
 * device actor remembers that row as written ({@link SeenIndexRows}) would not write it again for
 * the values still arriving in it, and they would vanish from the latest values; this node forgets
 * its own memory of the rows it deletes. Then the latest value, if it was in the range:
 *
 * <ul>
 *   <li>derived ({@code ts-ttl = 0}): the newest remaining row is the latest value by itself. When
 *       it must not be ({@code rewriteLatest} false), or none remains, the key gets a cleared mark
 *       ({@code ts_kv_keys.latest_cleared[key]} = the deleted latest value's timestamp; see {@link
 *       LatestValuesReader}); a rewrite that finds a remaining row removes an older mark.
 *   <li>table ({@code ts-ttl} set): the {@code ts_kv_latest} row is deleted at its own write time,
 *       so a newer value written meanwhile survives, and with {@code rewriteLatest} the newest
 *       remaining value is written in its place one microsecond later, in the same single-partition
 *       batch.
 * </ul>
 *
 * <p>Keys are done one after the other, so a delete of many keys holds few limiter slots. Writes go
 * through the {@link WriteRunner} (limiter, {@code op=delete} metrics); reads do not. Thread-safe;
 * stages complete on driver I/O threads with the driver's exceptions or a {@link
 * io.fieldline.common.StoreException} (the store translates).
 */
final class TelemetryDeletion {

  /**
   * The key's latest value as the readers see it now, with the write time of its {@code
   * ts_kv_latest} row in table mode.
   */
  private record Latest(long ts, long writeTime) {}

  private final CqlSession session;
  private final TsPartitioning partitioning;
  private final boolean derived;
  private final ConsistencyLevel consistency;
  private final WriteRunner runner;
  private final TelemetryInserts inserts;
  private final SeenIndexRows seenIndexRows;
  private final LatestValuesReader latestReader;
  private final PreparedStatement deleteAttributes;
  private final PreparedStatement selectDeviceParts;
  private final PreparedStatement selectKeyParts;
  private final PreparedStatement deleteRange;
  private final PreparedStatement deleteKeyPart;
  private final PreparedStatement markCleared;
  private final PreparedStatement unmarkCleared;
  private final PreparedStatement selectLatestRow;
  private final PreparedStatement deleteLatestRow;

  /** Prepares the statements; blocks. */
  TelemetryDeletion(
      CqlSession session,
      CassandraConfig config,
      WriteRunner runner,
      TelemetryInserts inserts,
      SeenIndexRows seenIndexRows,
      LatestValuesReader latestReader) {
    this.session = session;
    this.partitioning = config.tsPartitioning();
    this.derived = config.derivedLatest();
    this.consistency = config.writeConsistency();
    this.runner = runner;
    this.inserts = inserts;
    this.seenIndexRows = seenIndexRows;
    this.latestReader = latestReader;
    String ks = config.keyspace();
    deleteAttributes =
        session.prepare(
            "DELETE FROM " + ks + ".attributes_kv WHERE device_id = ? AND scope = ? AND key IN ?");
    selectDeviceParts =
        session.prepare(
            "SELECT part FROM "
                + ks
                + ".ts_kv_partitions WHERE device_id = ? AND part >= ? AND part <= ?");
    selectKeyParts =
        session.prepare(
            "SELECT part FROM "
                + ks
                + ".ts_kv_keys WHERE device_id = ? AND key = ? AND part >= ? AND part <= ?");
    deleteRange =
        session.prepare(
            "DELETE FROM "
                + ks
                + ".ts_kv WHERE device_id = ? AND part = ? AND key = ? AND ts >= ? AND ts < ?");
    deleteKeyPart =
        session.prepare(
            "DELETE FROM " + ks + ".ts_kv_keys WHERE device_id = ? AND key = ? AND part = ?");
    markCleared =
        session.prepare(
            "UPDATE " + ks + ".ts_kv_keys SET latest_cleared[?] = ? WHERE device_id = ?");
    unmarkCleared =
        session.prepare("DELETE latest_cleared[?] FROM " + ks + ".ts_kv_keys WHERE device_id = ?");
    selectLatestRow =
        session.prepare(
            "SELECT ts, writetime(ts), writetime(bool_v), writetime(long_v), writetime(dbl_v),"
                + " writetime(str_v), writetime(json_v) FROM "
                + ks
                + ".ts_kv_latest WHERE device_id = ? AND key = ?");
    deleteLatestRow =
        session.prepare(
            "DELETE FROM "
                + ks
                + ".ts_kv_latest USING TIMESTAMP ? WHERE device_id = ? AND key = ?");
  }

  /** Deletes the attributes {@code keys} of one scope: one statement. */
  CompletionStage<Void> attributes(DeviceId device, AttributeScope scope, Set<String> keys) {
    if (keys.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return write(
        List.of(deleteAttributes.bind(device.value(), scope.name(), List.copyOf(keys))), 1);
  }

  /** Deletes the values of {@code keys} with {@code startTs <= ts < endTs}, key after key. */
  CompletionStage<Void> telemetry(
      DeviceId device, Set<String> keys, long startTs, long endTs, boolean rewriteLatest) {
    // endTs = TimestampRange.MAX is "everything" (deleteAllDataForKeys): the value at MAX too.
    long end = endTs >= TimestampRange.MAX ? Long.MAX_VALUE : endTs;
    CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
    if (end <= startTs) {
      return chain;
    }
    for (String key : new TreeSet<>(keys)) {
      chain = chain.thenCompose(done -> key(device, key, startTs, end, rewriteLatest));
    }
    return chain;
  }

  private CompletionStage<Void> key(
      DeviceId device, String key, long start, long end, boolean rewrite) {
    CompletionStage<Optional<Latest>> before = latestBefore(device, key);
    return before.thenCompose(
        latest ->
            rows(device, key, start, end)
                .thenCompose(
                    done -> {
                      if (latest.isEmpty()
                          || latest.get().ts() < start
                          || latest.get().ts() >= end) {
                        return CompletableFuture.completedFuture(null);
                      }
                      Latest deleted = latest.get();
                      if (!derived && !rewrite) {
                        return replaceLatestRow(device, key, deleted, Optional.empty());
                      }
                      return latestReader
                          .newestStored(device, key)
                          .thenCompose(
                              remaining ->
                                  derived
                                      ? markOrUnmark(device, key, deleted, rewrite, remaining)
                                      : replaceLatestRow(
                                          device,
                                          key,
                                          deleted,
                                          rewrite ? remaining : Optional.empty()));
                    }));
  }

  private CompletionStage<Optional<Latest>> latestBefore(DeviceId device, String key) {
    if (derived) {
      return latestReader
          .latest(device, Optional.of(Set.of(key)))
          .thenApply(found -> found.stream().findFirst().map(entry -> new Latest(entry.ts(), 0)));
    }
    return session
        .executeAsync(selectLatestRow.bind(device.value(), key))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(TelemetryDeletion::latestRow));
  }

  // The newest write time of the row's cells: a delete at that time removes them all, and nothing
  // written later.
  private static Latest latestRow(Row row) {
    long writeTime = Long.MIN_VALUE;
    for (int i = 1; i <= 6; i++) {
      if (!row.isNull(i)) {
        writeTime = Math.max(writeTime, row.getLong(i));
      }
    }
    return new Latest(row.getLong(0), writeTime);
  }

  // The range delete in every bucket that may hold the key's values, then the index rows of the
  // past buckets it emptied.
  private CompletionStage<Void> rows(DeviceId device, String key, long start, long end) {
    UUID id = device.value();
    long firstPart = partitioning.partitionOf(Math.max(start, TimestampRange.MIN));
    long lastPart = partitioning.partitionOf(Math.min(end - 1, TimestampRange.MAX));
    CompletionStage<List<Long>> keyParts =
        AsyncRows.collect(
            session.executeAsync(selectKeyParts.bind(id, key, firstPart, lastPart)),
            row -> row.getLong(0),
            Integer.MAX_VALUE);
    CompletionStage<List<Long>> deviceParts =
        partitioning == TsPartitioning.INDEFINITE
            ? CompletableFuture.completedFuture(List.of(0L))
            : AsyncRows.collect(
                session.executeAsync(selectDeviceParts.bind(id, firstPart, lastPart)),
                row -> row.getLong(0),
                Integer.MAX_VALUE);
    return keyParts
        .thenCombine(deviceParts, (k, d) -> List.of(k, d))
        .thenCompose(
            both -> {
              List<Long> indexed = both.get(0);
              Set<Long> parts = new TreeSet<>(indexed);
              parts.addAll(both.get(1));
              List<BoundStatement> deletes = new ArrayList<>(parts.size());
              for (long part : parts) {
                deletes.add(deleteRange.bind(id, part, key, start, end));
              }
              long current = partitioning.partitionOf(System.currentTimeMillis());
              List<BoundStatement> emptied = new ArrayList<>();
              List<IndexRow> forgotten = new ArrayList<>();
              for (long part : indexed) {
                if (part < current && part >= start && partitioning.nextPartition(part) <= end) {
                  emptied.add(deleteKeyPart.bind(id, key, part));
                  forgotten.add(new IndexRow.KeyPartition(id, key, part));
                }
              }
              return write(deletes, deletes.size())
                  .thenCompose(
                      done -> {
                        if (emptied.isEmpty()) {
                          return CompletableFuture.completedFuture(null);
                        }
                        seenIndexRows.removeAll(forgotten);
                        return write(emptied, 1);
                      });
            });
  }

  // Derived latest values: mark the key unless a rewrite found a remaining row.
  private CompletionStage<Void> markOrUnmark(
      DeviceId device, String key, Latest deleted, boolean rewrite, Optional<TsKvEntry> remaining) {
    UUID id = device.value();
    BoundStatement statement =
        rewrite && remaining.isPresent()
            ? unmarkCleared.bind(key, id)
            : markCleared.bind(key, deleted.ts(), id);
    return write(List.of(statement), 1);
  }

  // Table latest values: delete the row at its write time, and put the remaining value in its place
  // just above it.
  private CompletionStage<Void> replaceLatestRow(
      DeviceId device, String key, Latest deleted, Optional<TsKvEntry> replacement) {
    UUID id = device.value();
    BoundStatement delete = deleteLatestRow.bind(deleted.writeTime(), id, key);
    if (replacement.isEmpty()) {
      return write(List.of(delete), 1);
    }
    BatchStatement batch =
        BatchStatement.builder(BatchType.UNLOGGED)
            .addStatement(delete)
            .addStatement(
                inserts.latestAt(id, replacement.get(), deleted.writeTime() + 1).statement())
            .build();
    return write(List.of(batch), 1);
  }

  // Every delete is idempotent (range and cell deletes, explicit write times): the driver may
  // retry.
  private CompletionStage<Void> write(List<? extends Statement<?>> statements, int partitions) {
    List<Statement<?>> ready = new ArrayList<>(statements.size());
    for (Statement<?> statement : statements) {
      ready.add(statement.setConsistencyLevel(consistency).setIdempotent(true));
    }
    return runner.run(StoreMetrics.Op.DELETE, ready, 0, partitions);
  }
}
