package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BatchableStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.PressureGauge;
import io.fieldline.common.StoreException;
import io.fieldline.common.TelemetryStore;
import io.fieldline.common.TsKvEntry;
import io.fieldline.dao.cassandra.internal.cql.AsyncRows;
import io.fieldline.dao.cassandra.internal.cql.ValueColumns;
import io.fieldline.dao.cassandra.internal.telemetry.SeenPartitions;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The Cassandra {@link TelemetryStore}: one device message is one unlogged batch, so one round trip
 * and about two partition updates however many keys it carries.
 *
 * <p>A telemetry message becomes: one {@code ts_kv} insert per value (all values of one time bucket
 * share the partition {@code (device_id, part)}), one {@code ts_kv_latest} upsert per key written
 * {@code USING TIMESTAMP ts*1000} so that an older value arriving late never replaces a newer one,
 * and, the first time this process sees a bucket of the device, one {@code ts_kv_partitions} row.
 * Batches hold at most {@code max-batch-statements} statements; longer messages are split, and the
 * write succeeds only if every batch does. Every statement is prepared at construction, idempotent
 * (retransmissions overwrite the same rows) and runs with {@code write-consistency} through the
 * shared {@link WriteLimiter}. {@link #readLatest} (actors restoring state after a restart or a
 * rebalance, possibly thousands at once) takes limiter slots too.
 *
 * <p>Thread-safe. Stages complete on driver I/O threads, with {@link
 * io.fieldline.common.StoreException} on failure.
 */
public final class CassandraTelemetryStore implements TelemetryStore {

  private final CqlSession session;
  private final CassandraConfig config;
  private final WriteRunner runner;
  private final @Nullable WriteCoalescer coalescer;
  private final SeenPartitions seenPartitions;
  private final PreparedStatement insertTs;
  private final PreparedStatement upsertLatest;
  private final PreparedStatement insertPartition;
  private final PreparedStatement upsertAttribute;
  private final PreparedStatement selectLatest;

  // Per-row cost in Cassandra's batch size (partition and clustering keys, timestamps, cell
  // headers); measured: 100 two-key-character rows reported as 7 668 bytes.
  private static final int STATEMENT_OVERHEAD = 64;

  // Index of the first value column in each insert below (ValueColumns.COLUMNS order).
  private static final int TS_VALUES = 4;
  private static final int LATEST_VALUES = 3;
  private static final int ATTRIBUTE_VALUES = 4;

  /**
   * Prepares the statements; blocks, so call at startup and not on a driver or event-loop thread.
   *
   * @param session a session whose keyspace {@code config.keyspace()} has the current schema
   * @param limiter the global write bound, shared with the other stores
   * @param registry where the {@link StoreMetrics} go
   */
  public CassandraTelemetryStore(
      CqlSession session, CassandraConfig config, WriteLimiter limiter, MeterRegistry registry) {
    this.session = session;
    this.config = config;
    StoreMetrics metrics = new StoreMetrics(registry, limiter);
    CassandraConfig.CoalesceConfig coalesce = config.coalesce();
    this.coalescer = coalesce.enabled()
        ? new WriteCoalescer(session, limiter, metrics, config.writeConsistency(),
            coalesce.maxBatchStatements(), coalesce.maxBatchBytes(),
            coalesce.maxBatchesInFlight(), coalesce.maxQueuedWrites())
        : null;
    this.runner = new WriteRunner(session, limiter, metrics, "telemetry writes", coalescer);
    this.seenPartitions = new SeenPartitions(config.partitionsCacheSize());
    String ks = config.keyspace();
    insertTs =
        session.prepare(
            "INSERT INTO " + ks + ".ts_kv (device_id, part, key, ts, " + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?");
    upsertLatest =
        session.prepare(
            "INSERT INTO " + ks + ".ts_kv_latest (device_id, key, ts, " + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?");
    insertPartition =
        session.prepare("INSERT INTO " + ks + ".ts_kv_partitions (device_id, part) VALUES (?, ?)");
    upsertAttribute =
        session.prepare(
            "INSERT INTO " + ks + ".attributes_kv (device_id, scope, key, last_update_ts, "
                + ValueColumns.COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?");
    selectLatest =
        session.prepare(
            "SELECT key, ts, " + ValueColumns.SELECT_WITH_WRITETIME + " FROM " + ks
                + ".ts_kv_latest WHERE device_id = ?");
  }

  @Override
  public CompletionStage<Void> writeTelemetry(DeviceId deviceId, List<TsKvEntry> entries) {
    if (entries.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    try {
      return telemetryBatches(deviceId, entries);
    } catch (ArithmeticException e) {
      return outOfRange(e);
    }
  }

  private CompletionStage<Void> telemetryBatches(DeviceId deviceId, List<TsKvEntry> entries) {
    UUID device = deviceId.value();
    TsPartitioning partitioning = config.tsPartitioning();
    List<SizedStatement> statements = new ArrayList<>(entries.size() * 2 + 1);
    Map<String, TsKvEntry> newestPerKey = new LinkedHashMap<>();
    List<Long> parts = new ArrayList<>(1);
    for (TsKvEntry entry : entries) {
      long part = partitioning.partitionOf(entry.ts());
      if (!parts.contains(part)) {
        parts.add(part);
      }
      statements.add(
          sized(
              entry.kv(),
              ValueColumns.bind(
                  insertTs
                      .boundStatementBuilder()
                      .setUuid(0, device)
                      .setLong(1, part)
                      .setString(2, entry.key())
                      .setLong(3, entry.ts())
                      .setInt(9, config.tsTtlSeconds()),
                  TS_VALUES,
                  entry.kv())));
      newestPerKey.merge(entry.key(), entry, (old, now) -> now.ts() >= old.ts() ? now : old);
    }
    for (TsKvEntry latest : newestPerKey.values()) {
      statements.add(
          sized(
              latest.kv(),
              ValueColumns.bind(
                  upsertLatest
                      .boundStatementBuilder()
                      .setUuid(0, device)
                      .setString(1, latest.key())
                      .setLong(2, latest.ts())
                      .setLong(8, writeTimestamp(latest.ts())),
                  LATEST_VALUES,
                  latest.kv())));
    }
    List<Long> newParts = new ArrayList<>(1);
    for (long part : parts) {
      if (!seenPartitions.contains(device, part)) {
        newParts.add(part);
        statements.add(new SizedStatement(insertPartition.bind(device, part), STATEMENT_OVERHEAD));
      }
    }
    // ts_kv partitions touched, plus the device's ts_kv_latest partition, plus its
    // ts_kv_partitions partition when a new bucket is recorded.
    int partitionUpdates = parts.size() + 1 + (newParts.isEmpty() ? 0 : 1);
    return runner.runCoalesced(
        StoreMetrics.Op.TELEMETRY,
        statements,
        entries.size(),
        partitionUpdates,
        () -> {
          for (long part : newParts) {
            seenPartitions.add(device, part);
          }
        },
        this::batches);
  }

  @Override
  public CompletionStage<Void> writeAttributes(
      DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
    if (entries.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    try {
      return attributeBatches(deviceId, scope, entries, ts);
    } catch (ArithmeticException e) {
      return outOfRange(e);
    }
  }

  private CompletionStage<Void> attributeBatches(
      DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
    List<SizedStatement> statements = new ArrayList<>(entries.size());
    for (KvEntry kv : entries) {
      statements.add(
          sized(
              kv,
              ValueColumns.bind(
                  upsertAttribute
                      .boundStatementBuilder()
                      .setUuid(0, deviceId.value())
                      .setString(1, scope.name())
                      .setString(2, kv.key())
                      .setLong(3, ts)
                      .setLong(9, writeTimestamp(ts)),
                  ATTRIBUTE_VALUES,
                  kv)));
    }
    return runner.runCoalesced(
        StoreMetrics.Op.ATTRIBUTES, statements, entries.size(), 1, () -> {}, this::batches);
  }

  /** Reads the latest value of every key of the device, sorted by key. */
  @Override
  public CompletionStage<List<TsKvEntry>> readLatest(DeviceId deviceId) {
    return runner.read(
        () ->
            AsyncRows.collect(
                    session.executeAsync(selectLatest.bind(deviceId.value())),
                    CassandraTelemetryStore::latestRow,
                    Integer.MAX_VALUE)
                .thenApply(rows -> rows.stream().filter(Objects::nonNull).toList()));
  }

  /**
   * The gauges the transport watches, besides the limiter's: the telemetry writes waiting for a
   * coalesced batch or carried by one (none when coalescing is off).
   */
  public List<PressureGauge> pressure() {
    return coalescer == null ? List.of() : List.of(coalescer.pressure());
  }

  /** Number of (device, partition) pairs remembered as recorded in {@code ts_kv_partitions}. */
  public int rememberedPartitions() {
    return seenPartitions.size();
  }

  static @Nullable TsKvEntry latestRow(Row row) {
    KvEntry kv = ValueColumns.read(row, 2, Objects.requireNonNull(row.getString(0)), true);
    return kv == null ? null : new TsKvEntry(row.getLong(1), kv);
  }

  // Consecutive statements up to max-batch-statements and max-batch-bytes per batch; a statement
  // bigger than the byte budget goes alone (a one-partition batch is not size-checked by Cassandra).
  private List<BatchStatement> batches(List<SizedStatement> statements) {
    List<BatchStatement> batches = new ArrayList<>(1);
    BatchStatementBuilder batch = null;
    int count = 0;
    int bytes = 0;
    for (SizedStatement statement : statements) {
      if (batch != null
          && (count == config.maxBatchStatements()
              || bytes + statement.bytes() > config.maxBatchBytes())) {
        batches.add(batch.build());
        batch = null;
      }
      if (batch == null) {
        batch =
            BatchStatement.builder(BatchType.UNLOGGED)
                .setIdempotence(true)
                .setConsistencyLevel(config.writeConsistency());
        count = 0;
        bytes = 0;
      }
      batch.addStatement(statement.statement());
      count++;
      bytes += statement.bytes();
    }
    if (batch != null) {
      batches.add(batch.build());
    }
    return batches;
  }

  private static SizedStatement sized(KvEntry kv, BoundStatementBuilder bound) {
    return new SizedStatement(bound.build(), STATEMENT_OVERHEAD + 2 * kv.key().length() + valueBytes(kv));
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

  /** A statement with its estimated size, as Cassandra counts batch sizes. */

  // A timestamp beyond year 292 000 does not fit Cassandra's microsecond write timestamps.
  private static CompletionStage<Void> outOfRange(ArithmeticException e) {
    return CompletableFuture.failedFuture(
        new StoreException(StoreException.Kind.FAILED, "timestamp out of range", e));
  }

  // Cassandra resolves concurrent writes of a cell by write timestamp (microseconds): using the
  // value's own time makes the newest value win, whatever order the writes arrive in.
  private static long writeTimestamp(long tsMillis) {
    return Math.multiplyExact(tsMillis, 1000L);
  }
}
