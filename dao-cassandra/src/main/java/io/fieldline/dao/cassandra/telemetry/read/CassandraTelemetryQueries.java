package io.fieldline.dao.cassandra.telemetry.read;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.Aggregation;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.SortOrder;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.TsPartitioning;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.ReadLimiter;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.cql.ValueColumns;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The Cassandra {@link TelemetryQueries}: the read side for the REST API, with ThingsBoard's
 * semantics (keys, latest values, history with aggregation, attributes).
 *
 * <p>History reads the partitions that exist for the device in the range ({@code ts_kv_partitions};
 * none for {@link TsPartitioning#INDEFINITE}) and, per key, walks them newest first (or oldest
 * first for {@link SortOrder#ASC}) until {@code limit} values are found. Aggregates fold every
 * value of the range in Java (see {@link Aggregation}): one paged range query per key and
 * partition, instead of ThingsBoard's one CQL aggregate query per bucket and partition. The keys of
 * one query are read {@code statements-per-query} at a time, so one query never has more statements
 * outstanding than that, however many keys it names.
 *
 * <p>Every query takes a slot of the node's {@link ReadLimiter} (never one of the write limiter)
 * for its whole duration and fails with {@link io.fieldline.common.query.ReadRefusedException} when
 * the read budget is spent; {@link #forUser} adds the user's own share. Statements run in the
 * driver profile {@value #PROFILE} (their own timeout and page size) at the driver's default
 * consistency. Thread-safe; stages complete on driver I/O threads and fail with {@link
 * io.fieldline.common.StoreException}.
 */
public final class CassandraTelemetryQueries implements TelemetryQueries {

  /** The driver execution profile of client reads ({@code datastax-java-driver.profiles}). */
  public static final String PROFILE = "client-reads";

  private final CqlSession session;
  private final ReadLimiter limiter;
  private final String user;
  private final int statementsPerQuery;
  private final TsPartitioning partitioning;
  private final LatestValuesReader latestReader;
  private final PreparedStatement selectParts;
  private final PreparedStatement selectNewest;
  private final PreparedStatement selectOldest;
  private final PreparedStatement selectRange;
  private final PreparedStatement selectAttributes;
  private final PreparedStatement selectAttributesOf;

  /**
   * Prepares the statements; blocks, so call at startup. Reads take slots of {@code limiter}, the
   * node's one read budget.
   */
  public CassandraTelemetryQueries(
      CqlSession session, CassandraConfig config, ReadLimiter limiter) {
    this.session = session;
    this.limiter = limiter;
    this.user = "";
    this.statementsPerQuery = config.reads().statementsPerQuery();
    this.partitioning = config.tsPartitioning();
    String ks = config.keyspace();
    String range =
        "SELECT ts, "
            + ValueColumns.SELECT
            + " FROM "
            + ks
            + ".ts_kv WHERE device_id = ? AND part = ? AND key = ? AND ts >= ? AND ts < ?";
    String attributes =
        "SELECT key, last_update_ts, "
            + ValueColumns.SELECT_WITH_WRITETIME
            + " FROM "
            + ks
            + ".attributes_kv WHERE device_id = ? AND scope = ?";
    latestReader = new LatestValuesReader(session, config);
    selectParts =
        session.prepare(
            "SELECT part FROM "
                + ks
                + ".ts_kv_partitions WHERE device_id = ? AND part >= ? AND part <= ?");
    selectNewest = session.prepare(range + " LIMIT ?");
    // Clustering is (key ASC, ts DESC): reading oldest first is the full reverse order.
    selectOldest = session.prepare(range + " ORDER BY key DESC, ts ASC LIMIT ?");
    selectRange = session.prepare(range);
    selectAttributes = session.prepare(attributes);
    selectAttributesOf = session.prepare(attributes + " AND key IN ?");
  }

  private CassandraTelemetryQueries(CassandraTelemetryQueries node, String user) {
    this.session = node.session;
    this.limiter = node.limiter;
    this.user = user;
    this.statementsPerQuery = node.statementsPerQuery;
    this.partitioning = node.partitioning;
    this.latestReader = node.latestReader;
    this.selectParts = node.selectParts;
    this.selectNewest = node.selectNewest;
    this.selectOldest = node.selectOldest;
    this.selectRange = node.selectRange;
    this.selectAttributes = node.selectAttributes;
    this.selectAttributesOf = node.selectAttributesOf;
  }

  /** The same reads, counted against {@code user}'s share of the read budget too. */
  @Override
  public TelemetryQueries forUser(String user) {
    return new CassandraTelemetryQueries(this, user);
  }

  @Override
  public CompletionStage<List<String>> keys(DeviceId deviceId) {
    return read(() -> latestReader.keys(deviceId));
  }

  @Override
  public CompletionStage<List<TsKvEntry>> latest(DeviceId deviceId, Optional<Set<String>> keys) {
    return read(() -> latestReader.latest(deviceId, keys));
  }

  @Override
  public CompletionStage<Map<String, List<TsKvEntry>>> history(
      DeviceId deviceId, HistoryQuery query) {
    if (query.endTs() <= query.startTs()) {
      return CompletableFuture.completedFuture(Map.of());
    }
    return read(() -> historyNow(deviceId.value(), query));
  }

  private CompletionStage<Map<String, List<TsKvEntry>>> historyNow(
      UUID device, HistoryQuery query) {
    return partitions(device, query)
        .thenCompose(
            partsDesc -> {
              if (partsDesc.isEmpty()) {
                return CompletableFuture.completedFuture(Map.of());
              }
              List<Long> walk = new ArrayList<>(partsDesc);
              if (query.order() == SortOrder.ASC) {
                Collections.reverse(walk);
              }
              List<String> keys = List.copyOf(query.keys());
              Map<String, List<TsKvEntry>> result = new TreeMap<>();
              AtomicInteger nextKey = new AtomicInteger();
              CompletableFuture<?>[] lanes =
                  new CompletableFuture<?>[Math.min(statementsPerQuery, keys.size())];
              for (int i = 0; i < lanes.length; i++) {
                lanes[i] = lane(device, keys, nextKey, walk, query, result).toCompletableFuture();
              }
              return CompletableFuture.allOf(lanes)
                  .thenApply(
                      done -> {
                        synchronized (result) {
                          return Collections.unmodifiableMap(new TreeMap<>(result));
                        }
                      });
            });
  }

  // One of the query's statementsPerQuery lanes: reads the next unread key, then the next, until
  // every key is taken; so the query has at most one statement per lane outstanding.
  private CompletionStage<Void> lane(
      UUID device,
      List<String> keys,
      AtomicInteger nextKey,
      List<Long> walk,
      HistoryQuery query,
      Map<String, List<TsKvEntry>> result) {
    int index = nextKey.getAndIncrement();
    if (index >= keys.size()) {
      return CompletableFuture.completedFuture(null);
    }
    String key = keys.get(index);
    CompletionStage<List<TsKvEntry>> values =
        query.aggregation() == Aggregation.NONE
            ? raw(device, key, walk, 0, query, new ArrayList<>())
            : aggregated(device, key, walk, query);
    return values.thenCompose(
        list -> {
          if (!list.isEmpty()) {
            synchronized (result) {
              result.put(key, list);
            }
          }
          return lane(device, keys, nextKey, walk, query, result);
        });
  }

  @Override
  public CompletionStage<List<AttributeKvEntry>> attributes(
      DeviceId deviceId, AttributeScope scope, Optional<Set<String>> keys) {
    UUID device = deviceId.value();
    return read(
        () ->
            AsyncRows.collect(
                    session.executeAsync(
                        (keys.isPresent()
                                ? selectAttributesOf.bind(
                                    device, scope.name(), List.copyOf(keys.get()))
                                : selectAttributes.bind(device, scope.name()))
                            .setExecutionProfileName(PROFILE)),
                    CassandraTelemetryQueries::attributeRow,
                    Integer.MAX_VALUE)
                .thenApply(rows -> rows.stream().filter(Objects::nonNull).toList()));
  }

  // One read: a slot of the node's read budget (and of the user's share) for the whole chain,
  // driver failures translated once.
  private <T> CompletionStage<T> read(Supplier<CompletionStage<T>> chain) {
    return StoreErrors.translated(limiter.submit(user, chain));
  }

  // Existing partitions overlapping [startTs, endTs), newest first.
  private CompletionStage<List<Long>> partitions(UUID device, HistoryQuery query) {
    if (partitioning == TsPartitioning.INDEFINITE) {
      return CompletableFuture.completedFuture(List.of(0L));
    }
    long min = partitioning.partitionOf(query.startTs());
    long max = partitioning.partitionOf(query.endTs() - 1);
    return AsyncRows.collect(
        session.executeAsync(selectParts.bind(device, min, max).setExecutionProfileName(PROFILE)),
        row -> row.getLong(0),
        Integer.MAX_VALUE);
  }

  // Walks the partitions one after the other until the limit is reached.
  private CompletionStage<List<TsKvEntry>> raw(
      UUID device,
      String key,
      List<Long> parts,
      int index,
      HistoryQuery query,
      List<TsKvEntry> out) {
    int remaining = query.limit() - out.size();
    if (index >= parts.size() || remaining <= 0) {
      return CompletableFuture.completedFuture(out);
    }
    PreparedStatement statement = query.order() == SortOrder.ASC ? selectOldest : selectNewest;
    return AsyncRows.forEach(
            session.executeAsync(
                statement
                    .bind(device, parts.get(index), key, query.startTs(), query.endTs(), remaining)
                    .setExecutionProfileName(PROFILE)),
            row -> {
              TsKvEntry entry = tsRow(row, key);
              if (entry != null) {
                out.add(entry);
              }
            })
        .thenCompose(done -> raw(device, key, parts, index + 1, query, out));
  }

  private CompletionStage<List<TsKvEntry>> aggregated(
      UUID device, String key, List<Long> parts, HistoryQuery query) {
    BucketAggregator aggregator =
        new BucketAggregator(query.aggregation(), query.startTs(), query.endTs(), query.interval());
    CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
    for (long part : parts) {
      chain =
          chain.thenCompose(
              done ->
                  AsyncRows.forEach(
                      session.executeAsync(
                          selectRange
                              .bind(device, part, key, query.startTs(), query.endTs())
                              .setExecutionProfileName(PROFILE)),
                      row -> {
                        TsKvEntry entry = tsRow(row, key);
                        if (entry != null) {
                          aggregator.add(entry.ts(), entry.kv());
                        }
                      }));
    }
    return chain.thenApply(done -> aggregator.result(key, query.order()));
  }

  private static @Nullable TsKvEntry tsRow(Row row, String key) {
    KvEntry kv = ValueColumns.read(row, 1, key, false);
    return kv == null ? null : new TsKvEntry(row.getLong(0), kv);
  }

  private static @Nullable AttributeKvEntry attributeRow(Row row) {
    KvEntry kv = ValueColumns.read(row, 2, Objects.requireNonNull(row.getString(0)), true);
    return kv == null ? null : new AttributeKvEntry(row.getLong(1), kv);
  }
}
