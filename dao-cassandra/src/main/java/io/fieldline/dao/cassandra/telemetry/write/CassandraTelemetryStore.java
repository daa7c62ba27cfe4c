package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.CqlSession;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.TsPartitioning;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.cql.WriteRunner;
import io.fieldline.dao.cassandra.feed.FeedWriter;
import io.fieldline.dao.cassandra.telemetry.read.LatestValuesReader;
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
 * <p>A telemetry message becomes ({@link TelemetryInserts}): one {@code ts_kv} insert per value
 * (all values of one time bucket share the partition {@code (device_id, part)}); the first time
 * this process sees a bucket of the device, one {@code ts_kv_partitions} row; the first time it
 * sees a key in a bucket, one {@code ts_kv_keys} row ({@link IndexRow}, remembered in {@link
 * SeenIndexRows}). Latest values are read from the newest rows ({@link LatestValuesReader}), so
 * nothing else is written per message, unless time-series rows expire ({@code ts-ttl}): then each
 * message also upserts one {@code ts_kv_latest} row per key, written {@code USING TIMESTAMP
 * ts*1000} so that an older value arriving late never replaces a newer one. A message that does not
 * fit one coalesced batch (or every message, with coalescing off) is split into batches of at most
 * {@code max-batch-statements} statements ({@link UnloggedBatches}), and the write succeeds only if
 * every batch does. Every statement is prepared at construction, idempotent (retransmissions
 * overwrite the same rows) and runs with {@code write-consistency} through the shared {@link
 * WriteLimiter}. {@link #readLatest} (a device actor's first ask for its latest values) takes
 * limiter slots too. Deletes of attributes and of time-series ranges are {@link
 * TelemetryDeletion}'s.
 *
 * <p>Thread-safe; called on the device actors' threads, never blocking them. Stages complete on
 * driver I/O threads, with {@link StoreException} on failure.
 */
public final class CassandraTelemetryStore implements TelemetryStore {

  private static final Runnable NOTHING = () -> {};

  private final CassandraConfig config;
  private final WriteRunner runner;
  private final UnloggedBatches batches;
  private final @Nullable WriteCoalescer coalescer;
  private final TelemetryInserts inserts;
  private final SeenIndexRows seenIndexRows;
  private final LatestValuesReader latestReader;
  private final TelemetryDeletion deletion;
  private final @Nullable FeedWriter feed;

  /**
   * Prepares the statements; blocks, so call at startup and not on a driver or event-loop thread.
   *
   * @param session a session whose keyspace {@code config.keyspace()} has the current schema
   * @param limiter the global write bound, shared with the other stores
   * @param registry where the {@link StoreMetrics} go
   */
  public CassandraTelemetryStore(
      CqlSession session, CassandraConfig config, WriteLimiter limiter, MeterRegistry registry) {
    this(session, config, limiter, registry, null);
  }

  /**
   * As {@link #CassandraTelemetryStore(CqlSession, CassandraConfig, WriteLimiter, MeterRegistry)},
   * and every telemetry message and attribute change also writes its change feed row, in the same
   * batch as its data when the message fits one coalesced batch, after its data otherwise.
   *
   * @param feed this process's feed log, or null to write no feed
   */
  public CassandraTelemetryStore(
      CqlSession session,
      CassandraConfig config,
      WriteLimiter limiter,
      MeterRegistry registry,
      @Nullable FeedWriter feed) {
    this.feed = feed;
    this.config = config;
    StoreMetrics metrics = new StoreMetrics(registry, limiter);
    this.batches =
        new UnloggedBatches(
            config.writeConsistency(), config.maxBatchStatements(), config.maxBatchBytes());
    CassandraConfig.CoalesceConfig coalesce = config.coalesce();
    this.coalescer =
        coalesce.enabled()
            ? new WriteCoalescer(
                session,
                limiter,
                metrics,
                batches,
                coalesce.maxBatchStatements(),
                coalesce.maxBatchBytes(),
                coalesce.maxBatchesInFlight(),
                coalesce.maxQueuedWrites())
            : null;
    this.runner = new WriteRunner(session, limiter, metrics, "telemetry writes");
    this.inserts = new TelemetryInserts(session, config.keyspace());
    this.seenIndexRows = new SeenIndexRows(config.partitionsCacheSize());
    this.latestReader = new LatestValuesReader(session, config);
    this.deletion =
        new TelemetryDeletion(
            session,
            config,
            new WriteRunner(session, limiter, metrics, "telemetry deletes"),
            inserts,
            seenIndexRows,
            latestReader);
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
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e); // the feed's memory is full of writes in flight
    }
  }

  private CompletionStage<Void> telemetryBatches(DeviceId deviceId, List<TsKvEntry> entries) {
    UUID device = deviceId.value();
    TsPartitioning partitioning = config.tsPartitioning();
    int ttl = config.tsTtlSeconds();
    List<SizedStatement> statements = new ArrayList<>(entries.size() + 2);
    List<Long> parts = new ArrayList<>(1);
    // The index rows this message needs; those not yet written by this process go with it.
    Set<IndexRow> indexRows = new LinkedHashSet<>();
    for (TsKvEntry entry : entries) {
      // Refused in both modes alike (it is needed as a write time only with ts-ttl): a timestamp
      // beyond year 292,000 is a device bug, and stored it would be the key's latest value for
      // ever.
      TelemetryInserts.writeTimestamp(entry.ts());
      long part = partitioning.partitionOf(entry.ts());
      if (!parts.contains(part)) {
        parts.add(part);
        indexRows.add(new IndexRow.Partition(device, part));
      }
      indexRows.add(new IndexRow.KeyPartition(device, entry.key(), part));
      statements.add(inserts.timeSeries(device, part, entry, ttl));
    }
    List<IndexRow> newIndexRows = seenIndexRows.unseen(indexRows);
    boolean newPartitions = false;
    boolean newKeys = false;
    for (IndexRow row : newIndexRows) {
      statements.add(row.insert(inserts));
      if (row.table() == IndexRow.Table.TS_KV_PARTITIONS) {
        newPartitions = true;
      } else {
        newKeys = true;
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
        write(
            StoreMetrics.Op.TELEMETRY,
            statements,
            feed == null ? null : feed.telemetry(deviceId, entries),
            entries.size(),
            partitionUpdates,
            newIndexRows.isEmpty() ? NOTHING : () -> seenIndexRows.addAll(newIndexRows));
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
    for (TsKvEntry newest : newestPerKey.values()) {
      out.add(inserts.latest(device, newest));
    }
  }

  @Override
  public CompletionStage<Void> writeAttributes(
      DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
    if (entries.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    try {
      List<SizedStatement> statements = new ArrayList<>(entries.size());
      for (KvEntry kv : entries) {
        statements.add(inserts.attribute(deviceId.value(), scope, kv, ts));
      }
      return write(
          StoreMetrics.Op.ATTRIBUTES,
          statements,
          feed == null ? null : feed.attributes(deviceId, scope, entries, ts),
          entries.size(),
          1,
          NOTHING);
    } catch (ArithmeticException e) {
      return outOfRange(e);
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<Void> deleteAttributes(
      DeviceId deviceId, AttributeScope scope, Set<String> keys) {
    return deletion.attributes(deviceId, scope, keys);
  }

  /** {@inheritDoc} See {@link TelemetryDeletion} for how, and what it costs. */
  @Override
  public CompletionStage<Void> deleteTelemetry(
      DeviceId deviceId, Set<String> keys, long startTs, long endTs, boolean rewriteLatest) {
    // Its reads fail with the driver's exceptions, its writes with StoreException.
    return StoreErrors.translated(
        deletion.telemetry(deviceId, keys, startTs, endTs, rewriteLatest));
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

  // One write of the store: merged with concurrent writes into a shared batch by the coalescer
  // when it fits one, else sent as batches of its own. The feed row, if any, goes in the same
  // coalesced batch; a message too large for one goes first, and its feed row only once every
  // batch of it succeeded, so a feed row never stands for a message that failed in part.
  private CompletionStage<Void> write(
      StoreMetrics.Op op,
      List<SizedStatement> statements,
      FeedWriter.@Nullable Appended feedRow,
      int rows,
      int partitionUpdates,
      Runnable onSuccess) {
    CompletionStage<Void> written;
    try {
      written = writeWithFeed(op, statements, feedRow, rows, partitionUpdates, onSuccess);
    } catch (RuntimeException e) {
      written = CompletableFuture.failedFuture(e);
    }
    FeedWriter writer = feed;
    if (writer == null || feedRow == null) {
      return written;
    }
    CompletableFuture<Void> settled = new CompletableFuture<>();
    written.whenComplete(
        (ok, failure) -> {
          boolean counted = writer.settle(feedRow, failure == null);
          if (failure != null) {
            settled.completeExceptionally(failure);
          } else if (!counted) {
            settled.completeExceptionally(
                new StoreException(
                    StoreException.Kind.UNAVAILABLE,
                    "written after this process's change feed lease ran out (frozen or cut off"
                        + " from storage longer than fieldline.export.lease): not acknowledged,"
                        + " the device sends it again"));
          } else {
            settled.complete(null);
          }
        });
    return settled;
  }

  private CompletionStage<Void> writeWithFeed(
      StoreMetrics.Op op,
      List<SizedStatement> statements,
      FeedWriter.@Nullable Appended feedRow,
      int rows,
      int partitionUpdates,
      Runnable onSuccess) {
    List<SizedStatement> withFeed = statements;
    if (feedRow != null) {
      withFeed = new ArrayList<>(statements.size() + 1);
      withFeed.addAll(statements);
      withFeed.add(new SizedStatement(feedRow.statement(), feedRow.bytes()));
    }
    WriteCoalescer shared = coalescer;
    if (shared != null && shared.fits(withFeed)) {
      long start = System.nanoTime();
      return runner.track(
          op,
          start,
          shared.submit(withFeed).toCompletableFuture(),
          rows,
          partitionUpdates,
          onSuccess);
    }
    CompletionStage<Void> data =
        runner.run(op, batches.split(statements), rows, partitionUpdates, onSuccess);
    if (feedRow == null) {
      return data;
    }
    return data.thenCompose(
        done ->
            runner.run(
                op,
                batches.split(List.of(new SizedStatement(feedRow.statement(), feedRow.bytes()))),
                0,
                1,
                NOTHING));
  }

  // A timestamp beyond year 292 000 does not fit Cassandra's microsecond write timestamps.
  private static CompletionStage<Void> outOfRange(ArithmeticException e) {
    return CompletableFuture.failedFuture(
        new StoreException(StoreException.Kind.FAILED, "timestamp out of range", e));
  }
}
