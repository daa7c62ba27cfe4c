package io.fieldline.dao.cassandra.telemetry.read;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.Aggregation;
import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.HistoryQuery;
import io.fieldline.common.KvEntry;
import io.fieldline.common.SortOrder;
import io.fieldline.common.TelemetryQueries;
import io.fieldline.common.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.TsPartitioning;
import io.fieldline.dao.cassandra.cql.AsyncRows;
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
import org.jspecify.annotations.Nullable;

/**
 * The Cassandra {@link TelemetryQueries}: the read side for the REST API, with ThingsBoard's
 * semantics (keys, latest values, history with aggregation, attributes).
 *
 * <p>History reads the partitions that exist for the device in the range ({@code ts_kv_partitions};
 * none for {@link TsPartitioning#INDEFINITE}) and, per key, walks them newest first (or oldest
 * first for {@link SortOrder#ASC}) until {@code limit} values are found. Aggregates fold every
 * value of the range in Java (see {@link Aggregation}): one paged range query per key and
 * partition, instead of ThingsBoard's one CQL aggregate query per bucket and partition.
 *
 * <p>Reads use the driver's default consistency ({@code basic.request.consistency}) and do not take
 * write-limiter slots. Thread-safe; stages complete on driver I/O threads and fail with {@link
 * io.fieldline.common.StoreException}.
 */
public final class CassandraTelemetryQueries implements TelemetryQueries {

  // Aggregation reads every value of the range; big pages mean fewer sequential round trips.
  private static final int AGGREGATION_PAGE_SIZE = 20_000;

  private final CqlSession session;
  private final TsPartitioning partitioning;
  private final LatestValuesReader latestReader;
  private final PreparedStatement selectParts;
  private final PreparedStatement selectNewest;
  private final PreparedStatement selectOldest;
  private final PreparedStatement selectRange;
  private final PreparedStatement selectAttributes;
  private final PreparedStatement selectAttributesOf;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraTelemetryQueries(CqlSession session, CassandraConfig config) {
    this.session = session;
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

  @Override
  public CompletionStage<List<String>> keys(DeviceId deviceId) {
    return StoreErrors.translated(latestReader.keys(deviceId));
  }

  @Override
  public CompletionStage<List<TsKvEntry>> latest(DeviceId deviceId, Optional<Set<String>> keys) {
    return StoreErrors.translated(latestReader.latest(deviceId, keys));
  }

  @Override
  public CompletionStage<Map<String, List<TsKvEntry>>> history(
      DeviceId deviceId, HistoryQuery query) {
    if (query.endTs() <= query.startTs()) {
      return CompletableFuture.completedFuture(Map.of());
    }
    UUID device = deviceId.value();
    CompletionStage<List<Long>> parts = partitions(device, query);
    return StoreErrors.translated(
        parts.thenCompose(
            partsDesc -> {
              List<Long> walk = new ArrayList<>(partsDesc);
              if (query.order() == SortOrder.ASC) {
                Collections.reverse(walk);
              }
              Map<String, List<TsKvEntry>> result = new TreeMap<>();
              CompletableFuture<?>[] perKey = new CompletableFuture<?>[query.keys().size()];
              int i = 0;
              for (String key : query.keys()) {
                CompletionStage<List<TsKvEntry>> values =
                    query.aggregation() == Aggregation.NONE
                        ? raw(device, key, walk, 0, query, new ArrayList<>())
                        : aggregated(device, key, walk, query);
                perKey[i++] =
                    values
                        .thenAccept(
                            list -> {
                              if (!list.isEmpty()) {
                                synchronized (result) {
                                  result.put(key, list);
                                }
                              }
                            })
                        .toCompletableFuture();
              }
              return CompletableFuture.allOf(perKey)
                  .thenApply(
                      done -> {
                        synchronized (result) {
                          return Collections.unmodifiableMap(new TreeMap<>(result));
                        }
                      });
            }));
  }

  @Override
  public CompletionStage<List<AttributeKvEntry>> attributes(
      DeviceId deviceId, AttributeScope scope, Optional<Set<String>> keys) {
    UUID device = deviceId.value();
    return StoreErrors.translated(
        AsyncRows.collect(
                session.executeAsync(
                    keys.isPresent()
                        ? selectAttributesOf.bind(device, scope.name(), List.copyOf(keys.get()))
                        : selectAttributes.bind(device, scope.name())),
                CassandraTelemetryQueries::attributeRow,
                Integer.MAX_VALUE)
            .thenApply(rows -> rows.stream().filter(Objects::nonNull).toList()));
  }

  // Existing partitions overlapping [startTs, endTs), newest first.
  private CompletionStage<List<Long>> partitions(UUID device, HistoryQuery query) {
    if (partitioning == TsPartitioning.INDEFINITE) {
      return CompletableFuture.completedFuture(List.of(0L));
    }
    long min = partitioning.partitionOf(query.startTs());
    long max = partitioning.partitionOf(query.endTs() - 1);
    return AsyncRows.collect(
        session.executeAsync(selectParts.bind(device, min, max)),
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
                statement.bind(
                    device, parts.get(index), key, query.startTs(), query.endTs(), remaining)),
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
                              .setPageSize(AGGREGATION_PAGE_SIZE)),
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
