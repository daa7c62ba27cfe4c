package io.fieldline.export;

import io.fieldline.common.feed.FeedCursor;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.feed.LocalFeed;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The logs one sink delivers on this node, what of each is read and delivered, and the order
 * entries may leave them in (docs/export.md, "Order"): the lowest sequence number first across this
 * node's logs, and a device that moved between nodes only once its former owners' logs have nothing
 * older left. The other nodes' logs count through their saved watermarks.
 *
 * <p>Holds no I/O: its {@link SinkRunner} reads entries into the buffers and cursors into the
 * positions. Confined to the export thread, like its runner.
 */
final class FeedMerge {

  /** Entries read and not yet delivered, in position order; indexed from the oldest. */
  static final class Buffer {
    private final ArrayList<FeedEntry> entries = new ArrayList<>();
    private int head;

    int size() {
      return entries.size() - head;
    }

    boolean isEmpty() {
      return size() == 0;
    }

    /** The entry {@code index} places after the oldest. */
    FeedEntry get(int index) {
      return entries.get(head + index);
    }

    @Nullable FeedEntry peekFirst() {
      return isEmpty() ? null : entries.get(head);
    }

    FeedEntry getFirst() {
      return entries.get(head);
    }

    @Nullable FeedEntry pollFirst() {
      if (isEmpty()) {
        return null;
      }
      FeedEntry first = entries.get(head);
      head++;
      if (head == entries.size()) {
        entries.clear();
        head = 0;
      } else if (head > 1024) {
        entries.subList(0, head).clear();
        head = 0;
      }
      return first;
    }

    void addLast(FeedEntry entry) {
      entries.add(entry);
    }

    void addAll(List<FeedEntry> more) {
      entries.addAll(more);
    }

    void clear() {
      entries.clear();
      head = 0;
    }
  }

  /** One log this runner delivers, and how far. */
  static final class LogState {
    final FeedLog log;
    final boolean own;
    final Buffer buffer = new Buffer();
    long position; // every entry at or below it is delivered or filtered out
    long scanned; // every entry at or below it is delivered or buffered
    boolean ready;
    boolean fetching;
    boolean exhausted; // adopted log read to its end
    long lastMillis; // when the last entry delivered or filtered out was written; 0: none yet

    LogState(FeedLog log, boolean own) {
      this.log = log;
      this.own = own;
    }
  }

  /** The entry that may go next, and its log. */
  record Next(LogState log, FeedEntry entry) {}

  private final Exporter.Context context;
  private final Map<UUID, LogState> logs = new LinkedHashMap<>();
  private final Map<UUID, Long> remoteFloors = new HashMap<>();
  private final Map<UUID, FeedLog> remoteLogs = new HashMap<>();

  FeedMerge(Exporter.Context context) {
    this.context = context;
  }

  Collection<LogState> logs() {
    return logs.values();
  }

  /** Whether {@code log} is still one of the logs merged (a read may outlive it). */
  boolean holds(LogState log) {
    return logs.get(log.log.id()) == log;
  }

  /** The logs this node delivers, and the others (whose watermarks order ours). */
  void update(Collection<FeedLog> local, @Nullable UUID ownLog, Collection<FeedLog> remote) {
    Map<UUID, FeedLog> wanted = new HashMap<>();
    for (FeedLog log : local) {
      wanted.put(log.id(), log);
    }
    logs.keySet().removeIf(id -> !wanted.containsKey(id));
    for (FeedLog log : local) {
      logs.computeIfAbsent(log.id(), id -> new LogState(log, id.equals(ownLog)));
    }
    remoteFloors.keySet().removeIf(id -> remote.stream().noneMatch(log -> log.id().equals(id)));
    remoteLogs.clear();
    for (FeedLog log : remote) {
      remoteFloors.putIfAbsent(log.id(), 0L);
      remoteLogs.put(log.id(), log);
    }
  }

  /** Whether an adopted log is delivered to its end. */
  boolean finished(UUID logId) {
    LogState log = logs.get(logId);
    return log == null || (log.exhausted && log.buffer.isEmpty() && log.position >= log.scanned);
  }

  /** Forgets what was read: every log starts again from its (new) cursor. */
  void restart() {
    for (LogState log : logs.values()) {
      log.ready = false;
      log.buffer.clear();
      log.exhausted = false;
    }
  }

  /**
   * The entry that may go next, given what the batch being cut already took from each log; null
   * when none may go yet.
   */
  @Nullable Next next(Map<LogState, Integer> taken) {
    LogState next = null;
    FeedEntry head = null;
    for (LogState log : logs.values()) {
      FeedEntry candidate = peek(log, taken.getOrDefault(log, 0));
      if (candidate != null && (head == null || candidate.seq() < head.seq())) {
        head = candidate;
        next = log;
      }
    }
    if (head == null
        || next == null
        || !mayGo(head.seq(), floorExcept(next, taken))
        || !formerOwnersPassed(head, next, taken)) {
      return null;
    }
    return new Next(next, head);
  }

  /** Whether other nodes' logs exist, whose watermarks must be read. */
  boolean watchesOthers() {
    return !remoteFloors.isEmpty();
  }

  /** The other nodes' watermarks, from their saved cursors of this sink's generation. */
  void othersAt(Map<UUID, FeedCursor> saved, int generation) {
    for (Map.Entry<UUID, Long> floor : remoteFloors.entrySet()) {
      FeedCursor cursor = saved.get(floor.getKey());
      floor.setValue(cursor != null && cursor.generation() == generation ? cursor.watermark() : 0L);
    }
  }

  /** The cursors to save: each ready log's position and watermark. */
  List<FeedCursor> cursors(UUID sinkId, int generation, long now) {
    List<FeedCursor> out = new ArrayList<>();
    for (LogState log : logs.values()) {
      if (log.ready) {
        out.add(
            new FeedCursor(
                sinkId,
                log.log.id(),
                log.position,
                log.buffer.isEmpty() ? floor(log, 0) : log.buffer.getFirst().seq(),
                now,
                generation));
      }
    }
    return out;
  }

  /** Drops what was delivered (or filtered out) from the buffers and moves the positions. */
  void advance(Map<LogState, Integer> taken) {
    for (Map.Entry<LogState, Integer> each : taken.entrySet()) {
      LogState log = each.getKey();
      for (int i = 0; i < each.getValue(); i++) {
        FeedEntry entry = log.buffer.pollFirst();
        if (entry != null) {
          log.position = entry.position();
          log.lastMillis = entry.seq() / 1000;
        }
      }
      if (log.buffer.isEmpty()) {
        log.position = Math.max(log.position, log.scanned);
      }
    }
  }

  private @Nullable FeedEntry peek(LogState log, int index) {
    return index < log.buffer.size() ? log.buffer.get(index) : null;
  }

  // Below the floor, an entry may go; at it too, unless the floor is 0 (another log not known
  // yet). Sequence numbers are per device: two logs often hold the same number (two nodes, the
  // same millisecond), for different devices; waiting for each other on it, neither would move.
  private static boolean mayGo(long seq, long floor) {
    return seq < floor || (seq == floor && floor > 0);
  }

  // The lowest sequence number any other log may still deliver: an entry below it may go.
  private long floorExcept(LogState except, Map<LogState, Integer> taken) {
    long floor = Long.MAX_VALUE;
    for (LogState log : logs.values()) {
      if (log != except) {
        floor = Math.min(floor, floor(log, taken.getOrDefault(log, 0)));
      }
    }
    return floor;
  }

  // A device that moved between nodes within the move window: its entry waits until every log of
  // its former owners has nothing older left for this sink. Other devices never wait for another
  // node, so the nodes deliver side by side.
  private boolean formerOwnersPassed(FeedEntry entry, LogState from, Map<LogState, Integer> taken) {
    long at = entry.seq() / 1000;
    Set<String> owners =
        context.moves().owners(entry.deviceId(), at - context.config().moveWindow().toMillis(), at);
    String writer = from.log.node();
    if (owners.isEmpty() || (owners.size() == 1 && owners.contains(writer))) {
      return true;
    }
    for (String owner : owners) {
      if (owner.equals(writer)) {
        continue;
      }
      for (LogState log : logs.values()) {
        if (log != from
            && log.log.node().equals(owner)
            && !mayGo(entry.seq(), floor(log, taken.getOrDefault(log, 0)))) {
          return false;
        }
      }
      for (FeedLog remote : remoteLogs.values()) {
        if (remote.node().equals(owner)
            && !mayGo(entry.seq(), remoteFloors.getOrDefault(remote.id(), 0L))) {
          return false;
        }
      }
    }
    return true;
  }

  // The lowest sequence number the log may still deliver after its first {@code index} entries.
  private long floor(LogState log, int index) {
    FeedEntry next = peek(log, index);
    if (next != null) {
      return next.seq();
    }
    if (!log.ready) {
      return 0;
    }
    LocalFeed local = ownNow(log);
    if (local != null) {
      return log.scanned >= local.settledPosition() ? local.pendingSeqFloor() : 0;
    }
    return log.exhausted ? Long.MAX_VALUE : 0;
  }

  /** The local feed, if this is still the log it writes (it may have rotated since). */
  @Nullable LocalFeed ownNow(LogState log) {
    LocalFeed local = context.localFeed();
    return log.own && local != null && local.logId().equals(log.log.id()) ? local : null;
  }

  /** Entries stored and not yet delivered. */
  long lagRecords() {
    long lag = 0;
    for (LogState log : logs.values()) {
      lag += lag(log);
    }
    return lag;
  }

  private long lag(LogState log) {
    if (!log.ready) {
      return 0;
    }
    LocalFeed local = ownNow(log);
    if (local != null) {
      return Math.max(0, local.settledPosition() - log.position);
    } else if (!log.exhausted) {
      return Math.max(log.buffer.size(), log.log.lastPosition() - log.position);
    }
    return log.buffer.size();
  }

  /**
   * When the oldest entry not yet delivered was written (epoch ms), 0 when there is none. A log
   * whose next entries are not read yet (a sink far behind reads them back from the feed's table a
   * page at a time) counts from its last delivered entry: the next one was written after it, and in
   * a log behind, only just after.
   */
  long oldestMillis() {
    long oldest = Long.MAX_VALUE;
    for (LogState log : logs.values()) {
      FeedEntry head = log.buffer.peekFirst();
      if (head != null) {
        oldest = Math.min(oldest, head.seq() / 1000);
      } else if (log.lastMillis > 0 && lag(log) > 0) {
        oldest = Math.min(oldest, log.lastMillis);
      }
    }
    return oldest == Long.MAX_VALUE ? 0 : oldest;
  }
}
