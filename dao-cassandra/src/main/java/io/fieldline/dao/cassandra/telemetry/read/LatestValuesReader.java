package io.fieldline.dao.cassandra.telemetry.read;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.ValueColumns;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Reads a device's time-series keys and latest values, for the REST API ({@link
 * CassandraTelemetryQueries}) and for device actors asked for their latest values (the telemetry
 * store's {@code readLatest}, hence public).
 *
 * <p>Keys come from {@code ts_kv_keys}, the index of which time buckets hold each key (one row per
 * device, key and bucket, written once per process by the store). Latest values depend on {@link
 * CassandraConfig#derivedLatest()}:
 *
 * <ul>
 *   <li>derived (time-series rows never expire, the default): for each key, the newest row of its
 *       newest bucket in {@code ts_kv} ({@code LIMIT 1}: the clustering order is {@code ts DESC}),
 *       one small read per key, at most {@value #READS_AT_ONCE} at once per device; the index read
 *       returns one row per key ({@code GROUP BY key}). Nothing is written per message for latest
 *       values: a message's rows are its latest values, in the same write.
 *   <li>table ({@code ts-ttl} set): {@code ts_kv_latest}, upserted with every message, so that a
 *       latest value outlives the expiry of its row, as in ThingsBoard.
 * </ul>
 *
 * <p>Thread-safe; stages complete on driver I/O threads with the driver's exceptions (callers
 * translate them).
 */
public final class LatestValuesReader {

  private static final int READS_AT_ONCE = 8;

  private final CqlSession session;
  private final boolean derived;
  private final PreparedStatement selectKeyParts;
  private final PreparedStatement selectKeyPartsOf;
  private final PreparedStatement selectPartsOfKey;
  private final PreparedStatement selectNewestRow;
  private final PreparedStatement selectLatestTable;
  private final PreparedStatement selectLatestTableOf;

  /** Prepares the statements; blocks, so call at startup. */
  public LatestValuesReader(CqlSession session, CassandraConfig config) {
    this.session = session;
    this.derived = config.derivedLatest();
    String ks = config.keyspace();
    // GROUP BY without an aggregate returns each key's first row: its newest bucket.
    String keyParts = "SELECT key, part FROM " + ks + ".ts_kv_keys WHERE device_id = ?";
    String table =
        "SELECT key, ts, "
            + ValueColumns.SELECT_WITH_WRITETIME
            + " FROM "
            + ks
            + ".ts_kv_latest WHERE device_id = ?";
    selectKeyParts = session.prepare(keyParts + " GROUP BY key");
    selectKeyPartsOf = session.prepare(keyParts + " AND key IN ? GROUP BY key");
    selectPartsOfKey =
        session.prepare("SELECT part FROM " + ks + ".ts_kv_keys WHERE device_id = ? AND key = ?");
    selectNewestRow =
        session.prepare(
            "SELECT ts, "
                + ValueColumns.SELECT
                + " FROM "
                + ks
                + ".ts_kv WHERE device_id = ? AND part = ? AND key = ? LIMIT 1");
    selectLatestTable = session.prepare(table);
    selectLatestTableOf = session.prepare(table + " AND key IN ?");
  }

  /** The device's time-series keys, sorted. */
  public CompletionStage<List<String>> keys(DeviceId deviceId) {
    return newestParts(deviceId.value(), Optional.empty())
        .thenApply(parts -> List.copyOf(parts.keySet()));
  }

  /** Latest values of the given keys (all keys when empty), sorted by key. */
  public CompletionStage<List<TsKvEntry>> latest(DeviceId deviceId, Optional<Set<String>> keys) {
    UUID device = deviceId.value();
    if (!derived) {
      return AsyncRows.collect(
              session.executeAsync(
                  keys.isPresent()
                      ? selectLatestTableOf.bind(device, List.copyOf(keys.get()))
                      : selectLatestTable.bind(device)),
              LatestValuesReader::latestTableRow,
              Integer.MAX_VALUE)
          .thenApply(rows -> rows.stream().filter(Objects::nonNull).toList());
    }
    return newestParts(device, keys)
        .thenCompose(
            parts -> {
              List<Map.Entry<String, Long>> todo = new ArrayList<>(parts.entrySet());
              List<TsKvEntry> found = new ArrayList<>(todo.size());
              return readInGroups(device, todo, 0, found).thenApply(done -> found);
            });
  }

  // At most READS_AT_ONCE keys read in parallel per device, so a storm of such reads of devices
  // with many keys stays within the driver's stream ids however many keys each device has.
  private CompletionStage<Void> readInGroups(
      UUID device, List<Map.Entry<String, Long>> todo, int from, List<TsKvEntry> found) {
    if (from >= todo.size()) {
      return CompletableFuture.completedFuture(null);
    }
    List<Map.Entry<String, Long>> group =
        todo.subList(from, Math.min(todo.size(), from + READS_AT_ONCE));
    List<CompletableFuture<@Nullable TsKvEntry>> reads = new ArrayList<>(group.size());
    for (Map.Entry<String, Long> keyPart : group) {
      reads.add(latestOf(device, keyPart.getKey(), keyPart.getValue()));
    }
    return CompletableFuture.allOf(reads.toArray(CompletableFuture<?>[]::new))
        .thenCompose(
            done -> {
              for (CompletableFuture<@Nullable TsKvEntry> read : reads) {
                TsKvEntry entry = read.join();
                if (entry != null) {
                  found.add(entry);
                }
              }
              return readInGroups(device, todo, from + READS_AT_ONCE, found);
            });
  }

  // The newest row of the key in its newest bucket; when that bucket holds none (an index row
  // whose rows never made it: a batch that timed out half-applied), the next older bucket.
  private CompletableFuture<@Nullable TsKvEntry> latestOf(UUID device, String key, long newest) {
    return newestRow(device, key, newest)
        .thenCompose(
            entry ->
                entry != null
                    ? CompletableFuture.completedFuture(entry)
                    : AsyncRows.collect(
                            session.executeAsync(selectPartsOfKey.bind(device, key)),
                            row -> row.getLong(0),
                            Integer.MAX_VALUE)
                        .thenCompose(partsDesc -> firstRowIn(device, key, partsDesc, 0, newest)));
  }

  private CompletableFuture<@Nullable TsKvEntry> firstRowIn(
      UUID device, String key, List<Long> partsDesc, int index, long skip) {
    if (index >= partsDesc.size()) {
      return CompletableFuture.completedFuture(null);
    }
    long part = partsDesc.get(index);
    if (part == skip) {
      return firstRowIn(device, key, partsDesc, index + 1, skip);
    }
    return newestRow(device, key, part)
        .thenCompose(
            entry ->
                entry != null
                    ? CompletableFuture.completedFuture(entry)
                    : firstRowIn(device, key, partsDesc, index + 1, skip));
  }

  // Key -> its newest bucket, in key order (the index's clustering is key ASC, part DESC, so the
  // first row of each key is its newest bucket).
  private CompletionStage<Map<String, Long>> newestParts(UUID device, Optional<Set<String>> keys) {
    Map<String, Long> newest = new LinkedHashMap<>();
    return AsyncRows.forEach(
            session.executeAsync(
                keys.isPresent()
                    ? selectKeyPartsOf.bind(device, List.copyOf(keys.get()))
                    : selectKeyParts.bind(device)),
            row -> newest.putIfAbsent(Objects.requireNonNull(row.getString(0)), row.getLong(1)))
        .thenApply(done -> newest);
  }

  // Empty when the key's rows in that bucket expired or were deleted.
  private CompletableFuture<@Nullable TsKvEntry> newestRow(UUID device, String key, long part) {
    return session
        .executeAsync(selectNewestRow.bind(device, part, key))
        .thenApply(
            rs -> {
              Row row = rs.one();
              if (row == null) {
                return null;
              }
              KvEntry kv = ValueColumns.read(row, 1, key, false);
              return kv == null ? null : new TsKvEntry(row.getLong(0), kv);
            })
        .toCompletableFuture();
  }

  private static @Nullable TsKvEntry latestTableRow(Row row) {
    KvEntry kv = ValueColumns.read(row, 2, Objects.requireNonNull(row.getString(0)), true);
    return kv == null ? null : new TsKvEntry(row.getLong(1), kv);
  }
}
