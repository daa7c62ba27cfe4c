package io.fieldline.dao.cassandra.feed;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.feed.FeedCursor;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.feed.FeedStore;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The change feed's logs, entries, leases and cursors in Cassandra ({@code feed}, {@code
 * feed_logs}, {@code feed_cursors}; docs/export.md).
 *
 * <p>Leases are compare-and-set lightweight transactions on the lease columns as last read, so two
 * processes never both believe they hold a log. Reading a log walks its blocks ({@link
 * FeedWriter#BLOCK} positions per partition) from the one holding {@code after}; an empty block
 * ends the read, so a log's end is where its writer stopped, unless the log's published last
 * position lies beyond it (a block of only failed writes: 4,096 writes failed in a row, as in a
 * Cassandra outage). Every statement is idempotent except the leases, and none goes through the
 * write limiter: these are a few requests per sink and second, next to thousands of message writes.
 */
public final class CassandraFeedStore implements FeedStore {

  private final CqlSession session;
  private final ConsistencyLevel consistency;
  private final PreparedStatement selectLogs;
  private final PreparedStatement selectLease;
  private final PreparedStatement selectLast;
  private final PreparedStatement takeFreeLease;
  private final PreparedStatement takeLease;
  private final PreparedStatement releaseLease;
  private final PreparedStatement retireLog;
  private final PreparedStatement reopenLog;
  private final PreparedStatement readBlock;
  private final PreparedStatement firstOfBlock;
  private final PreparedStatement selectCursors;
  private final PreparedStatement saveCursor;
  private final PreparedStatement deleteCursors;
  private final PreparedStatement publishLast;

  /**
   * Prepares the statements; blocks, so call at startup.
   *
   * @param logTtlSeconds how long a log's row outlives its last change (feed retention and a day)
   */
  public CassandraFeedStore(
      CqlSession session, String keyspace, ConsistencyLevel consistency, int logTtlSeconds) {
    this.session = session;
    String ttl = " USING TTL " + logTtlSeconds;
    this.consistency = consistency;
    String logs = keyspace + ".feed_logs";
    this.selectLogs =
        session.prepare(
            "SELECT log, node, created_at, owner, lease_until, last_pos, closed, retired FROM "
                + logs
                + " WHERE bucket = 0");
    this.selectLease =
        session.prepare("SELECT owner, lease_until FROM " + logs + " WHERE bucket = 0 AND log = ?");
    this.selectLast =
        session.prepare("SELECT last_pos FROM " + logs + " WHERE bucket = 0 AND log = ?");
    this.takeFreeLease =
        session.prepare(
            "UPDATE "
                + logs
                + ttl
                + " SET owner = ?, lease_until = ? WHERE bucket = 0 AND log = ? IF owner = null");
    this.takeLease =
        session.prepare(
            "UPDATE "
                + logs
                + ttl
                + " SET owner = ?, lease_until = ? WHERE bucket = 0 AND log = ?"
                + " IF owner = ? AND lease_until = ?");
    this.releaseLease =
        session.prepare(
            "UPDATE " + logs + " SET owner = null WHERE bucket = 0 AND log = ? IF owner = ?");
    this.retireLog =
        session.prepare(
            "UPDATE " + logs + ttl + " SET retired = true WHERE bucket = 0 AND log = ?");
    this.reopenLog =
        session.prepare(
            "UPDATE " + logs + ttl + " SET retired = false WHERE bucket = 0 AND log = ?");
    this.publishLast =
        session.prepare(
            "UPDATE " + logs + ttl + " SET last_pos = ?, closed = ? WHERE bucket = 0 AND log = ?");
    String feed = keyspace + ".feed";
    this.readBlock =
        session.prepare(
            "SELECT pos, seq, device_id, kind, scope, ts, body FROM "
                + feed
                + " WHERE log = ? AND block = ? AND pos > ? LIMIT ?");
    this.firstOfBlock =
        session.prepare(
            "SELECT pos, seq FROM " + feed + " WHERE log = ? AND block = ? AND pos > ? LIMIT 1");
    String cursors = keyspace + ".feed_cursors";
    this.selectCursors =
        session.prepare(
            "SELECT log, pos, watermark, updated_at, generation FROM "
                + cursors
                + " WHERE sink_id = ?");
    this.saveCursor =
        session.prepare(
            "INSERT INTO "
                + cursors
                + " (sink_id, log, pos, watermark, updated_at, generation)"
                + " VALUES (?, ?, ?, ?, ?, ?)");
    this.deleteCursors = session.prepare("DELETE FROM " + cursors + " WHERE sink_id = ?");
  }

  @Override
  public CompletionStage<List<FeedLog>> logs() {
    return StoreErrors.translated(
        AsyncRows.collect(
                run(selectLogs.bind()),
                row -> row.getBoolean("retired") ? null : log(row),
                Integer.MAX_VALUE)
            .thenApply(rows -> rows.stream().filter(Objects::nonNull).toList()));
  }

  private static FeedLog log(Row row) {
    return new FeedLog(
        Objects.requireNonNull(row.getUuid("log")),
        Objects.requireNonNullElse(row.getString("node"), ""),
        row.getLong("created_at"),
        row.getUuid("owner"),
        row.getLong("lease_until"),
        row.getLong("last_pos"),
        row.getBoolean("closed"));
  }

  @Override
  public CompletionStage<Boolean> lease(UUID logId, UUID owner, long now, long leaseUntil) {
    return StoreErrors.translated(
        run(selectLease.bind(logId))
            .thenCompose(
                rs -> {
                  Row row = rs.one();
                  if (row == null) {
                    return CompletableFuture.completedFuture(false);
                  }
                  UUID holder = row.getUuid("owner");
                  long until = row.getLong("lease_until");
                  if (holder == null) {
                    return lwt(takeFreeLease.bind(owner, leaseUntil, logId));
                  }
                  if (!holder.equals(owner) && until >= now) {
                    return CompletableFuture.completedFuture(false);
                  }
                  return lwt(takeLease.bind(owner, leaseUntil, logId, holder, until));
                }));
  }

  @Override
  public CompletionStage<Void> release(UUID logId, UUID owner) {
    return StoreErrors.translated(lwt(releaseLease.bind(logId, owner)).thenApply(applied -> null));
  }

  @Override
  public CompletionStage<Void> publish(UUID logId, long lastPosition, boolean closed) {
    return StoreErrors.translated(
        run(publishLast.bind(lastPosition, closed, logId)).thenApply(rs -> null));
  }

  @Override
  public CompletionStage<Void> retire(UUID logId) {
    return StoreErrors.translated(run(retireLog.bind(logId)).thenApply(rs -> null));
  }

  @Override
  public CompletionStage<Void> reopenRetired() {
    CompletionStage<Void> reopened =
        AsyncRows.collect(
                run(selectLogs.bind()),
                row -> row.getBoolean("retired") ? row.getUuid("log") : null,
                Integer.MAX_VALUE)
            .thenCompose(
                ids -> {
                  CompletableFuture<?>[] each =
                      ids.stream()
                          .filter(Objects::nonNull)
                          .map(id -> run(reopenLog.bind(id)).toCompletableFuture())
                          .toArray(CompletableFuture[]::new);
                  return CompletableFuture.allOf(each);
                });
    return StoreErrors.translated(reopened);
  }

  @Override
  public CompletionStage<List<FeedEntry>> read(UUID logId, long after, int limit) {
    if (limit <= 0) {
      return CompletableFuture.completedFuture(List.of()); // CQL refuses LIMIT 0
    }
    List<FeedEntry> out = new ArrayList<>(Math.min(limit, 1024));
    return StoreErrors.translated(readFrom(logId, after, limit, out, -1));
  }

  // One block after the other, until the limit, or a block ends and the next one is empty: the
  // log's end (its writer had not reached it), unless the log's published last position is beyond
  // that empty block, which then only held failed writes and is skipped. The published position
  // is read once, at the first empty block (-1 until then).
  private CompletionStage<List<FeedEntry>> readFrom(
      UUID logId, long after, int limit, List<FeedEntry> out, long published) {
    long block = (after + 1) / FeedWriter.BLOCK;
    int wanted = limit - out.size();
    return AsyncRows.collect(
            run(readBlock.bind(logId, block, after, wanted)), CassandraFeedStore::entry, wanted)
        .thenCompose(
            rows -> {
              out.addAll(rows);
              if (rows.size() >= wanted) {
                return CompletableFuture.completedFuture(out);
              }
              long endOfBlock = (block + 1) * FeedWriter.BLOCK - 1;
              long endOfNext = endOfBlock + FeedWriter.BLOCK;
              return firstIn(logId, block + 1)
                  .thenCompose(
                      first -> {
                        if (first != null) {
                          return readFrom(logId, endOfBlock, limit, out, published);
                        }
                        return lastPublished(logId, published)
                            .thenCompose(
                                last ->
                                    last > endOfNext
                                        ? readFrom(logId, endOfNext, limit, out, last)
                                        : CompletableFuture.completedFuture(out));
                      });
            });
  }

  // The log's last position as its writer last published it (0 when unknown); `known` if read.
  private CompletionStage<Long> lastPublished(UUID logId, long known) {
    if (known >= 0) {
      return CompletableFuture.completedFuture(known);
    }
    return run(selectLast.bind(logId))
        .thenApply(
            rs -> {
              Row row = rs.one();
              return row == null ? 0L : row.getLong("last_pos");
            });
  }

  private static FeedEntry entry(Row row) {
    long position = row.getLong("pos");
    long seq = row.getLong("seq");
    DeviceId device = new DeviceId(Objects.requireNonNull(row.getUuid("device_id")));
    ByteBuffer body = Objects.requireNonNull(row.getByteBuffer("body"));
    if (row.getByte("kind") == FeedWriter.ATTRIBUTES) {
      return new FeedEntry.Attributes(
          position,
          seq,
          device,
          AttributeScope.valueOf(Objects.requireNonNull(row.getString("scope"))),
          row.getLong("ts"),
          FeedBody.readAttributes(body));
    }
    return new FeedEntry.Telemetry(position, seq, device, FeedBody.readTelemetry(body));
  }

  @Override
  public CompletionStage<Long> positionBefore(UUID logId, long seq) {
    return StoreErrors.translated(
        lastPublished(logId, -1)
            .thenCompose(last -> lastBlock(logId, last / FeedWriter.BLOCK, 1))
            .thenCompose(last -> search(logId, seq, 0, last)));
  }

  // The last block with entries, from `known` (the block of the published last position, or one
  // with entries): probes known + 1, + 2, + 4 … until a block is empty, then bisects between the
  // last probe with entries and that empty one.
  private CompletionStage<Long> lastBlock(UUID logId, long known, long step) {
    long probe = known + step;
    return firstIn(logId, probe)
        .thenCompose(
            first ->
                first == null
                    ? lastBetween(logId, known, probe)
                    : lastBlock(logId, probe, step * 2));
  }

  // The last block with entries in [full, empty), where `empty` has none.
  private CompletionStage<Long> lastBetween(UUID logId, long full, long empty) {
    if (empty - full <= 1) {
      return CompletableFuture.completedFuture(full);
    }
    long middle = (full + empty) >>> 1;
    return firstIn(logId, middle)
        .thenCompose(
            first ->
                first == null
                    ? lastBetween(logId, full, middle)
                    : lastBetween(logId, middle, empty));
  }

  // Binary search for the last block whose first entry is below seq, then a scan of it.
  private CompletionStage<Long> search(UUID logId, long seq, long low, long high) {
    if (low >= high) {
      return scan(logId, seq, low);
    }
    long middle = (low + high + 1) / 2;
    return firstIn(logId, middle)
        .thenCompose(
            first ->
                first != null && first[1] < seq
                    ? search(logId, seq, middle, high)
                    : search(logId, seq, low, middle - 1));
  }

  private CompletionStage<Long> scan(UUID logId, long seq, long block) {
    long start = block * FeedWriter.BLOCK - 1;
    return AsyncRows.collect(
            run(readBlock.bind(logId, block, start, (int) FeedWriter.BLOCK)),
            row -> new long[] {row.getLong("pos"), row.getLong("seq")},
            Integer.MAX_VALUE)
        .thenApply(
            rows -> {
              long before = Math.max(0, start);
              for (long[] row : rows) {
                if (row[1] >= seq) {
                  return row[0] - 1;
                }
                before = row[0];
              }
              return before;
            });
  }

  private CompletionStage<long @Nullable []> firstIn(UUID logId, long block) {
    return run(firstOfBlock.bind(logId, block, block * FeedWriter.BLOCK - 1))
        .thenApply(
            rs -> {
              Row row = rs.one();
              return row == null ? null : new long[] {row.getLong("pos"), row.getLong("seq")};
            });
  }

  @Override
  public CompletionStage<Map<UUID, FeedCursor>> cursors(UUID sinkId) {
    return StoreErrors.translated(
        AsyncRows.collect(
                run(selectCursors.bind(sinkId)),
                row ->
                    new FeedCursor(
                        sinkId,
                        Objects.requireNonNull(row.getUuid("log")),
                        row.getLong("pos"),
                        row.getLong("watermark"),
                        row.getLong("updated_at"),
                        row.getInt("generation")),
                Integer.MAX_VALUE)
            .thenApply(
                rows -> {
                  Map<UUID, FeedCursor> byLog = new HashMap<>();
                  for (FeedCursor cursor : rows) {
                    byLog.put(cursor.logId(), cursor);
                  }
                  return byLog;
                }));
  }

  @Override
  public CompletionStage<Void> saveCursors(List<FeedCursor> cursors) {
    if (cursors.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    // One sink's cursors share a partition: one mutation.
    BatchStatementBuilder batch = BatchStatement.builder(DefaultBatchType.UNLOGGED);
    for (FeedCursor c : cursors) {
      batch.addStatement(
          saveCursor.bind(
              c.sinkId(), c.logId(), c.position(), c.watermark(), c.updatedAt(), c.generation()));
    }
    return StoreErrors.translated(run(batch.build()).thenApply(rs -> null));
  }

  @Override
  public CompletionStage<Void> deleteCursors(UUID sinkId) {
    return StoreErrors.translated(run(deleteCursors.bind(sinkId)).thenApply(rs -> null));
  }

  private CompletionStage<AsyncResultSet> run(Statement<?> statement) {
    return session.executeAsync(statement.setConsistencyLevel(consistency));
  }

  private CompletionStage<Boolean> lwt(Statement<?> statement) {
    return session.executeAsync(statement).thenApply(AsyncResultSet::wasApplied);
  }
}
