package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.PressureGauge;
import io.fieldline.common.StoreException;
import io.fieldline.common.TelemetryStore;
import io.fieldline.common.TsKvEntry;
import io.fieldline.dao.cassandra.internal.cql.ValueColumns;
import io.fieldline.dao.cassandra.internal.telemetry.SeenIndexRows;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The Cassandra {@link TelemetryStore}: one device message is one unlogged batch (shared with other
 * devices' messages when writes queue up, see {@link WriteCoalescer}), so one round trip and, in
 * the steady state, one partition update however many keys it carries.
 *
 * <p>A telemetry message becomes: one {@code ts_kv} insert per value (all values of one time bucket
 * share the partition {@code (device_id, part)}); the first time this process sees a bucket of the
 * device, one {@code ts_kv_partitions} row; the first time it sees a key in a bucket, one {@code
 * ts_kv_keys} row. Latest values are read from the newest rows ({@link LatestValuesReader}), so
 * nothing else is written per message, unless time-series rows expire ({@code ts-ttl}): then each
 * message also upserts one {@code ts_kv_latest} row per key, written {@code USING TIMESTAMP
 * ts*1000} so that an older value arriving late never replaces a newer one. Batches hold at most
 * {@code max-batch-statements} statements; longer messages are split, and the write succeeds only
 * if every batch does. Every statement is prepared at construction, idempotent (retransmissions
 * overwrite the same rows) and runs with {@code write-consistency} through the shared {@link
 * WriteLimiter}. {@link #readLatest} (actors restoring state after a restart or a rebalance,
 * possibly thousands at once) takes limiter slots too.
 *
 * <p>Thread-safe. Stages complete on driver I/O threads, with {@link
 * io.fieldline.common.StoreException} on failure.
 */
public final class CassandraTelemetryStore implements TelemetryStore {

  private final CqlSession session;
  private final CassandraConfig config;
  private final WriteRunner runner;
  private final @Nullable WriteCoalescer coalescer;
  private final SeenIndexRows seenIndexRows;
  private final LatestValuesReader latestReader;
  private final PreparedStatement insertTs;
  private final PreparedStatement upsertLatest;
  private final PreparedStatement insertPartition;
  private final PreparedStatement insertKeyPartition;
  private final PreparedStatement upsertAttribute;

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
    this.coalescer =
        coalesce.enabled()
            ? new WriteCoalescer(
                session,
                limiter,
                metrics,
                config.writeConsistency(),
                coalesce.maxBatchStatements(),
                coalesce.maxBatchBytes(),
                coalesce.maxBatchesInFlight(),
                coalesce.maxQueuedWrites())
            : null;
    this.runner = new WriteRunner(session, limiter, metrics, "telemetry writes", coalescer);
    this.seenIndexRows = new SeenIndexRows(config.partitionsCacheSize());
    this.latestReader = new LatestValuesReader(session, config);
    String ks = config.keyspace();
    insertTs =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".ts_kv (device_id, part, key, ts, "
                + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?");
    upsertLatest =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".ts_kv_latest (device_id, key, ts, "
                + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?");
    insertPartition =
        session.prepare("INSERT INTO " + ks + ".ts_kv_partitions (device_id, part) VALUES (?, ?)");
    insertKeyPartition =
        session.prepare(
            "INSERT INTO " + ks + ".ts_kv_keys (device_id, key, part) VALUES (?, ?, ?)");
    upsertAttribute =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".attributes_kv (device_id, scope, key, last_update_ts, "
                + ValueColumns.COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TIMESTAMP ?");
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
    List<SizedStatement> statements = new ArrayList<>(entries.size() + 2);
    List<Long> parts = new ArrayList<>(1);
    // The index rows this message needs; those not yet written by this process go with it.
    Set<Object> indexRows = new LinkedHashSet<>();
    for (TsKvEntry entry : entries) {
      // Refused in both modes alike (it is needed as a write time only with ts-ttl): a timestamp
      // beyond year 292,000 is a device bug, and stored it would be the key's latest value for
      // ever.
      writeTimestamp(entry.ts());
      long part = partitioning.partitionOf(entry.ts());
      if (!parts.contains(part)) {
        parts.add(part);
        indexRows.add(new SeenIndexRows.Partition(device, part));
      }
      indexRows.add(new SeenIndexRows.KeyPartition(device, entry.key(), part));
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
    }
    List<Object> newIndexRows = seenIndexRows.unseen(indexRows);
    boolean newPartitions = false;
    boolean newKeys = false;
    for (Object row : newIndexRows) {
      if (row instanceof SeenIndexRows.Partition partition) {
        newPartitions = true;
        statements.add(
            new SizedStatement(insertPartition.bind(device, partition.part()), STATEMENT_OVERHEAD));
      } else if (row instanceof SeenIndexRows.KeyPartition keyPartition) {
        newKeys = true;
        statements.add(
            new SizedStatement(
                insertKeyPartition.bind(device, keyPartition.key(), keyPartition.part()),
                STATEMENT_OVERHEAD + 2 * keyPartition.key().length()));
      }
    }
    if (!config.derivedLatest()) {
      addLatestUpserts(device, entries, statements);
    }
    // ts_kv partitions touched, plus the device's ts_kv_latest partition when it is written, plus
    // its ts_kv_partitions and ts_kv_keys partitions when new index rows are recorded.
    int partitionUpdates =
        parts.size()
            + (config.derivedLatest() ? 0 : 1)
            + (newPartitions ? 1 : 0)
            + (newKeys ? 1 : 0);
    CompletionStage<Void> write =
        runner.runCoalesced(
            StoreMetrics.Op.TELEMETRY,
            statements,
            entries.size(),
            partitionUpdates,
            newIndexRows.isEmpty() ? () -> {} : () -> seenIndexRows.addAll(newIndexRows),
            this::batches);
    write.whenComplete(
        (ok, failure) -> {
          if (failure != null) {
            // Cassandra may be restarting: writes it acknowledged but had not synced to its commit
            // log yet can be gone, index rows included. Write them all again.
            seenIndexRows.clear();
          }
        });
    return write;
  }

  // One ts_kv_latest upsert per key: the newest value of the message.
  private void addLatestUpserts(UUID device, List<TsKvEntry> entries, List<SizedStatement> out) {
    Map<String, TsKvEntry> newestPerKey = new LinkedHashMap<>();
    for (TsKvEntry entry : entries) {
      newestPerKey.merge(entry.key(), entry, (old, now) -> now.ts() >= old.ts() ? now : old);
    }
    for (TsKvEntry latest : newestPerKey.values()) {
      out.add(
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
    return runner.read(() -> latestReader.latest(deviceId, Optional.empty()));
  }

  /**
   * The gauges the transport watches, besides the limiter's: the telemetry writes waiting for a
   * coalesced batch or carried by one (none when coalescing is off).
   */
  public List<PressureGauge> pressure() {
    return coalescer == null ? List.of() : List.of(coalescer.pressure());
  }

  /** Number of index rows ({@code ts_kv_partitions}, {@code ts_kv_keys}) remembered as written. */
  public int rememberedIndexRows() {
    return seenIndexRows.size();
  }

  // Consecutive statements up to max-batch-statements and max-batch-bytes per batch; a statement
  // bigger than the byte budget goes alone (a one-partition batch is not size-checked by
  // Cassandra).
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
