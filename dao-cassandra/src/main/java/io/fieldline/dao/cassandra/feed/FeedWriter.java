package io.fieldline.dao.cassandra.feed;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * This process's log of the change feed: gives each stored message its position and sequence number
 * and the feed row that goes into the message's own batch, and keeps the newest entries in memory
 * ({@link LocalFeed}).
 *
 * <p>Positions are handed out in call order, and the store calls {@link #telemetry} / {@link
 * #attributes} in each device's order (its actor writes one message after the other), so a device's
 * entries are in position order. The sequence number is a hybrid clock: the wall clock in
 * microseconds, or one more than the last number given when the clock has not moved on (or went
 * back), so it strictly increases on this node; an entry of n records reserves n numbers.
 *
 * <p>Each entry is settled once its write completed ({@link #settle}); the settled position is the
 * highest one below which every entry is settled, and only settled, written entries are ever given
 * out from memory. Memory is a ring of {@code memoryEntries} slots: an entry not yet settled is
 * never overwritten, so at most that many feed writes are in flight; one more is refused as
 * overloaded. Thread-safe: one short lock per append and per settle.
 */
public final class FeedWriter implements LocalFeed {

  /** Positions per feed partition: {@code block = position / BLOCK}. */
  public static final long BLOCK = 4096;

  /**
   * A feed row's size in Cassandra's batch-size count beyond its body, as the coalescer must add it
   * up to stay under {@code batch_size_fail_threshold}: the clustering position (8), the row's
   * write time and TTL (16), and per cell its value and its write time and TTL (16 each): seq (8),
   * device (16), kind (1), ts (8), scope (an attribute row's, up to 14), body; rounded up. Counting
   * 48 made a coalesced batch of small messages 1.5 times larger than estimated: refused as too
   * large (found by PublishAckIT with two test JVMs).
   */
  static final int ROW_OVERHEAD = 176;

  static final byte TELEMETRY = 0;
  static final byte ATTRIBUTES = 1;

  private static final byte PENDING = 0;
  private static final byte WRITTEN = 1;
  private static final byte FAILED = 2;

  /**
   * A feed row for the batch of its message; {@link #settle} it with the write's outcome.
   *
   * @param log the log it belongs to (this process's log when it was appended)
   */
  public record Appended(Object log, long position, BoundStatement statement, int bytes) {}

  // One log of this process: a ring of the newest entries, by position % capacity.
  private static final class Log {
    final UUID id;
    final @Nullable FeedEntry[] entries;
    final long[] seqs;
    final byte[] states;
    long nextPosition = 1;
    long settled;
    long fenceAt = Long.MAX_VALUE; // a write completing later does not count (see leaseHeld)

    Log(UUID id, int capacity) {
      this.id = id;
      this.entries = new FeedEntry[capacity];
      this.seqs = new long[capacity];
      this.states = new byte[capacity];
    }
  }

  private final CqlSession session;
  private final PreparedStatement insert;
  private final PreparedStatement insertLog;
  private final DefaultConsistencyLevel consistency;
  private final String node;
  private final long leaseMillis;
  private final int ttlSeconds;
  private final LongSupplier clockMillis;
  private final int capacity;
  private final UUID processId = UUID.randomUUID();
  private final Object lock = new Object();
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

  /**
   * How much earlier than the lease's end a write must complete to count: room for the clocks of
   * the nodes to disagree (an adopter acts on its own clock).
   */
  static final long FENCE_MARGIN_MILLIS = 2_000;

  private Log current; // guarded by lock
  private long fenced; // guarded by lock
  private long lastSeq; // guarded by lock
  private long appended; // guarded by lock

  /**
   * Prepares the insert and records the log in {@code feed_logs}, leased to this process for {@code
   * leaseMillis}; blocks, so call at startup.
   */
  public FeedWriter(
      CqlSession session,
      String keyspace,
      FeedConfig config,
      DefaultConsistencyLevel consistency,
      long leaseMillis,
      LongSupplier clockMillis) {
    this.session = session;
    this.consistency = consistency;
    this.node = config.node();
    this.leaseMillis = leaseMillis;
    this.ttlSeconds = config.retentionSeconds();
    this.clockMillis = clockMillis;
    this.capacity = config.memoryEntries();
    this.insert =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".feed (log, block, pos, seq, device_id, kind, scope, ts, body)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?");
    this.insertLog =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".feed_logs (bucket, log, node, created_at, owner, lease_until, last_pos,"
                + " closed, retired) VALUES (0, ?, ?, ?, ?, ?, 0, false, false) USING TTL ?");
    this.current = new Log(UUID.randomUUID(), capacity);
    session.execute(logRow(current.id));
  }

  private com.datastax.oss.driver.api.core.cql.Statement<?> logRow(UUID id) {
    long now = clockMillis.getAsLong();
    return insertLog
        .bind(id, node, now, processId, now + leaseMillis, ttlSeconds + 86_400)
        .setConsistencyLevel(consistency);
  }

  @Override
  public UUID logId() {
    synchronized (lock) {
      return current.id;
    }
  }

  @Override
  public UUID processId() {
    return processId;
  }

  @Override
  public void rotate() {
    UUID id = UUID.randomUUID();
    // Recorded before any entry of it can be acknowledged: the first append waits for nothing,
    // but the row is written well within the time any delivery looks for it.
    session.executeAsync(logRow(id));
    synchronized (lock) {
      current = new Log(id, capacity);
    }
  }

  @Override
  public void leaseHeld(UUID logId, long until) {
    synchronized (lock) {
      if (current.id.equals(logId)) {
        current.fenceAt = until - FENCE_MARGIN_MILLIS;
      }
    }
  }

  /** Writes that completed after their log's fence and were not acknowledged (for metrics). */
  public long fenced() {
    synchronized (lock) {
      return fenced;
    }
  }

  /** Entries appended since start (for metrics). */
  public long appended() {
    synchronized (lock) {
      return appended;
    }
  }

  /** Entries held in memory, settled or not (for metrics). */
  public long inMemory() {
    synchronized (lock) {
      return Math.min(current.nextPosition - 1, capacity);
    }
  }

  /**
   * The feed row of a telemetry message; fails with OVERLOADED when {@code memoryEntries} feed
   * writes are already in flight.
   */
  public Appended telemetry(DeviceId device, List<TsKvEntry> values) {
    int records = distinctTimestamps(values);
    ByteBuffer body = FeedBody.telemetry(values);
    synchronized (lock) {
      Log log = writable();
      long position = reserve(log);
      long seq = nextSeq(Math.max(1, records));
      FeedEntry entry = new FeedEntry.Telemetry(position, seq, device, values);
      return keep(log, entry, seq, TELEMETRY, null, 0L, body);
    }
  }

  /** The feed row of an attribute change; fails as {@link #telemetry} does. */
  public Appended attributes(DeviceId device, AttributeScope scope, List<KvEntry> values, long ts) {
    ByteBuffer body = FeedBody.attributes(values);
    synchronized (lock) {
      Log log = writable();
      long position = reserve(log);
      long seq = nextSeq(1);
      FeedEntry entry = new FeedEntry.Attributes(position, seq, device, scope, ts, values);
      return keep(log, entry, seq, ATTRIBUTES, scope, ts, body);
    }
  }

  /**
   * Records the outcome of the write that carried {@code row}. Returns false for a write that
   * completed after its log's fence ({@link #leaseHeld}): it must not be acknowledged. It is then
   * settled as failed (never given out from memory), and the next entries go to a new log.
   */
  public boolean settle(Appended row, boolean written) {
    boolean advanced = false;
    boolean late = false;
    synchronized (lock) {
      Log log = (Log) row.log();
      int slot = slot(row.position());
      late = written && clockMillis.getAsLong() > log.fenceAt;
      log.states[slot] = written && !late ? WRITTEN : FAILED;
      if (!written || late) {
        log.entries[slot] = null;
      }
      if (late) {
        fenced++;
      }
      while (log.settled + 1 < log.nextPosition && log.states[slot(log.settled + 1)] != PENDING) {
        log.settled++;
        advanced = log == current;
      }
    }
    if (advanced) {
      for (Runnable listener : listeners) {
        listener.run();
      }
    }
    if (late) {
      rotateAway((Log) row.log());
    }
    return !late;
  }

  // After a late write: new entries go to a new log, once per fenced log.
  private void rotateAway(Log fencedLog) {
    UUID id = UUID.randomUUID();
    synchronized (lock) {
      if (current != fencedLog) {
        return;
      }
      current = new Log(id, capacity);
    }
    session.executeAsync(logRow(id));
  }

  /** Settles a position of the current log (for tests that write rows themselves). */
  boolean settle(long position, boolean written) {
    Log log;
    synchronized (lock) {
      log = current;
    }
    return settle(new Appended(log, position, insert.bind(), 0), written);
  }

  /** {@link #tail(UUID, long, int)} of the current log (for tests). */
  @Nullable Tail tail(long after, int limit) {
    return tail(logId(), after, limit);
  }

  @Override
  public long settledPosition() {
    synchronized (lock) {
      return current.settled;
    }
  }

  @Override
  public long pendingSeqFloor() {
    synchronized (lock) {
      Log log = current;
      if (log.settled + 1 < log.nextPosition) {
        return log.seqs[slot(log.settled + 1)];
      }
      return Math.max(lastSeq + 1, clockMillis.getAsLong() * 1000);
    }
  }

  @Override
  public @Nullable Tail tail(UUID logId, long after, int limit) {
    synchronized (lock) {
      Log log = current;
      if (!log.id.equals(logId) || after < log.nextPosition - 1 - capacity || after > log.settled) {
        return null;
      }
      List<FeedEntry> out = new ArrayList<>(Math.min(limit, 256));
      long through = after;
      while (through < log.settled && out.size() < limit) {
        through++;
        FeedEntry entry = log.entries[slot(through)];
        if (log.states[slot(through)] == WRITTEN && entry != null) {
          out.add(entry);
        }
      }
      return new Tail(out, through);
    }
  }

  @Override
  public void onSettled(Runnable listener) {
    listeners.add(listener);
  }

  // How many records the values become: one per distinct timestamp (nearly always one).
  private static int distinctTimestamps(List<TsKvEntry> values) {
    if (values.isEmpty()) {
      return 0;
    }
    long first = values.get(0).ts();
    for (TsKvEntry value : values) {
      if (value.ts() != first) {
        Set<Long> distinct = new HashSet<>();
        for (TsKvEntry each : values) {
          distinct.add(each.ts());
        }
        return distinct.size();
      }
    }
    return 1;
  }

  // The log to append to: the current one, or a new one once the current one's fence has passed
  // (its lease was not renewed in time): an entry appended then would fail at any completion.
  private Log writable() {
    if (clockMillis.getAsLong() > current.fenceAt) {
      UUID id = UUID.randomUUID();
      session.executeAsync(logRow(id));
      current = new Log(id, capacity);
    }
    return current;
  }

  private long reserve(Log log) {
    long position = log.nextPosition;
    if (position - log.settled > capacity) {
      throw new StoreException(
          StoreException.Kind.OVERLOADED,
          "more than "
              + capacity
              + " change feed writes in flight (fieldline.feed.memory-entries)");
    }
    log.nextPosition++;
    appended++;
    return position;
  }

  private long nextSeq(int count) {
    long seq = Math.max(lastSeq + 1, clockMillis.getAsLong() * 1000);
    lastSeq = seq + count - 1;
    return seq;
  }

  private Appended keep(
      Log log,
      FeedEntry entry,
      long seq,
      byte kind,
      @Nullable AttributeScope scope,
      long ts,
      ByteBuffer body) {
    int slot = slot(entry.position());
    log.entries[slot] = entry;
    log.seqs[slot] = seq;
    log.states[slot] = PENDING;
    BoundStatementBuilder builder =
        insert
            .boundStatementBuilder()
            .setUuid(0, log.id)
            .setLong(1, entry.position() / BLOCK)
            .setLong(2, entry.position())
            .setLong(3, seq)
            .setUuid(4, entry.deviceId().value())
            .setByte(5, kind)
            .setLong(7, ts)
            .setByteBuffer(8, body)
            .setInt(9, ttlSeconds);
    if (scope != null) {
      // Telemetry leaves it unset: a bound null would write a tombstone cell into every row.
      builder = builder.setString(6, scope.name());
    }
    BoundStatement statement = builder.build().setIdempotent(true);
    return new Appended(log, entry.position(), statement, ROW_OVERHEAD + body.remaining());
  }

  private int slot(long position) {
    return (int) (position % capacity);
  }
}
