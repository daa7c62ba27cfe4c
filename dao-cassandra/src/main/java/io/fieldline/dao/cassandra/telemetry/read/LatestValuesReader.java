package io.fieldline.dao.cassandra.telemetry.read;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.TsPartitioning;
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
 * <p>A key is listed by {@link #keys} exactly when it has a latest value. Deleting a key's latest
 * value without putting an older one in its place ({@code TelemetryStore.deleteTelemetry}) removes
 * its {@code ts_kv_latest} row in table mode; in derived mode, where there is no such row, it
 * records in the static map {@code ts_kv_keys.latest_cleared} the timestamp at or below which the
 * key's rows are no longer latest values. The index read returns that map with every row, so it
 * costs nothing until a key has such a mark; a marked key is listed only if a row newer than the
 * mark exists (one more {@code LIMIT 1} read, none when its newest bucket lies wholly below the
 * mark).
 *
 * <p>Thread-safe; stages complete on driver I/O threads with the driver's exceptions (callers
 * translate them).
 */
public final class LatestValuesReader {

  private static final int READS_AT_ONCE = 8;

  /** {@link NewestPart#cleared} of a key without a cleared mark. */
  private static final long NOT_CLEARED = Long.MIN_VALUE;

  /**
   * A key's newest bucket in the index, and its cleared mark.
   *
   * @param part the newest bucket holding the key
   * @param cleared rows at or below this timestamp are not latest values; {@link #NOT_CLEARED} when
   *     none
   */
  private record NewestPart(long part, long cleared) {}

  private final CqlSession session;
  private final boolean derived;
  private final TsPartitioning partitioning;
  private final PreparedStatement selectKeyParts;
  private final PreparedStatement selectKeyPartsOf;
  private final PreparedStatement selectPartsOfKey;
  private final PreparedStatement selectNewestRow;
  private final PreparedStatement selectLatestTable;
  private final PreparedStatement selectLatestTableOf;
  private final PreparedStatement selectLatestTableKeys;

  /** Prepares the statements; blocks, so call at startup. */
  public LatestValuesReader(CqlSession session, CassandraConfig config) {
    this.session = session;
    this.derived = config.derivedLatest();
    this.partitioning = config.tsPartitioning();
    String ks = config.keyspace();
    // GROUP BY without an aggregate returns each key's first row: its newest bucket.
    String keyParts =
        "SELECT key, part, latest_cleared FROM " + ks + ".ts_kv_keys WHERE device_id = ?";
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
    selectLatestTableKeys =
        session.prepare("SELECT key FROM " + ks + ".ts_kv_latest WHERE device_id = ?");
  }

  /** The device's time-series keys that have a latest value, sorted. */
  public CompletionStage<List<String>> keys(DeviceId deviceId) {
    UUID device = deviceId.value();
    if (!derived) {
      return AsyncRows.collect(
          session.executeAsync(selectLatestTableKeys.bind(device)),
          row -> Objects.requireNonNull(row.getString(0)),
          Integer.MAX_VALUE);
    }
    return newestParts(device, Optional.empty())
        .thenCompose(
            parts -> {
              List<String> keys = new ArrayList<>(parts.size());
              List<Map.Entry<String, NewestPart>> marked = new ArrayList<>(0);
              for (Map.Entry<String, NewestPart> entry : parts.entrySet()) {
                NewestPart newest = entry.getValue();
                if (newest.cleared() == NOT_CLEARED) {
                  keys.add(entry.getKey());
                } else if (!whollyCleared(newest.part(), newest.cleared())) {
                  marked.add(entry);
                }
              }
              if (marked.isEmpty()) {
                return CompletableFuture.completedFuture(List.copyOf(keys));
              }
              // Only keys with a cleared mark cost a read: is any row left above the mark?
              List<TsKvEntry> found = new ArrayList<>(marked.size());
              return readInGroups(device, marked, 0, found)
                  .thenApply(
                      done -> {
                        found.forEach(entry -> keys.add(entry.key()));
                        return keys.stream().sorted().toList();
                      });
            });
  }

  /**
   * The newest row of {@code key} in any of its buckets, cleared mark or not: what a delete that
   * rewrites the latest value puts in its place. Reads the key's buckets newest first until one
   * holds a row.
   */
  public CompletionStage<Optional<TsKvEntry>> newestStored(DeviceId deviceId, String key) {
    UUID device = deviceId.value();
    return AsyncRows.collect(
            session.executeAsync(selectPartsOfKey.bind(device, key)),
            row -> row.getLong(0),
            Integer.MAX_VALUE)
        .thenCompose(
            partsDesc -> firstRowIn(device, key, partsDesc, 0, Long.MIN_VALUE, NOT_CLEARED))
        .thenApply(Optional::ofNullable);
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
              List<Map.Entry<String, NewestPart>> todo = new ArrayList<>(parts.entrySet());
              List<TsKvEntry> found = new ArrayList<>(todo.size());
              return readInGroups(device, todo, 0, found).thenApply(done -> found);
            });
  }

  // Whether every timestamp of the bucket starting at part is at or below the cleared mark.
  private boolean whollyCleared(long part, long cleared) {
    return cleared != NOT_CLEARED && partitioning.nextPartition(part) - 1 <= cleared;
  }

  // At most READS_AT_ONCE keys read in parallel per device, so a storm of such reads of devices
  // with many keys stays within the driver's stream ids however many keys each device has.
  private CompletionStage<Void> readInGroups(
      UUID device, List<Map.Entry<String, NewestPart>> todo, int from, List<TsKvEntry> found) {
    if (from >= todo.size()) {
      return CompletableFuture.completedFuture(null);
    }
    List<Map.Entry<String, NewestPart>> group =
        todo.subList(from, Math.min(todo.size(), from + READS_AT_ONCE));
    List<CompletableFuture<@Nullable TsKvEntry>> reads = new ArrayList<>(group.size());
    for (Map.Entry<String, NewestPart> keyPart : group) {
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
  // whose rows never made it: a batch that timed out half-applied, or rows deleted), the next
  // older bucket. Nothing at or below the key's cleared mark is a latest value.
  private CompletableFuture<@Nullable TsKvEntry> latestOf(
      UUID device, String key, NewestPart newest) {
    long cleared = newest.cleared();
    if (whollyCleared(newest.part(), cleared)) {
      return CompletableFuture.completedFuture(null);
    }
    return newestRow(device, key, newest.part())
        .thenCompose(
            entry ->
                entry != null
                    ? CompletableFuture.completedFuture(entry)
                    : AsyncRows.collect(
                            session.executeAsync(selectPartsOfKey.bind(device, key)),
                            row -> row.getLong(0),
                            Integer.MAX_VALUE)
                        .thenCompose(
                            partsDesc ->
                                firstRowIn(device, key, partsDesc, 0, newest.part(), cleared)))
        .thenApply(entry -> entry == null || entry.ts() <= cleared ? null : entry);
  }

  // The first row found walking the buckets newest first, skipping one already read, and stopping
  // at the first bucket wholly below the cleared mark (every older one is too).
  private CompletableFuture<@Nullable TsKvEntry> firstRowIn(
      UUID device, String key, List<Long> partsDesc, int index, long skip, long cleared) {
    if (index >= partsDesc.size()) {
      return CompletableFuture.completedFuture(null);
    }
    long part = partsDesc.get(index);
    if (whollyCleared(part, cleared)) {
      return CompletableFuture.completedFuture(null);
    }
    if (part == skip) {
      return firstRowIn(device, key, partsDesc, index + 1, skip, cleared);
    }
    return newestRow(device, key, part)
        .thenCompose(
            entry ->
                entry != null
                    ? CompletableFuture.completedFuture(entry)
                    : firstRowIn(device, key, partsDesc, index + 1, skip, cleared));
  }

  // Key -> its newest bucket and cleared mark, in key order (the index's clustering is key ASC,
  // part DESC, so the first row of each key is its newest bucket). A partition left with only its
  // static map (every index row deleted) answers one row without a key: skipped.
  private CompletionStage<Map<String, NewestPart>> newestParts(
      UUID device, Optional<Set<String>> keys) {
    Map<String, NewestPart> newest = new LinkedHashMap<>();
    return AsyncRows.forEach(
            session.executeAsync(
                keys.isPresent()
                    ? selectKeyPartsOf.bind(device, List.copyOf(keys.get()))
                    : selectKeyParts.bind(device)),
            row -> {
              String key = row.getString(0);
              if (key == null) {
                return;
              }
              Long cleared = row.getMap(2, String.class, Long.class).get(key);
              newest.putIfAbsent(
                  key, new NewestPart(row.getLong(1), cleared == null ? NOT_CLEARED : cleared));
            })
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
