package io.fieldline.dao.cassandra.telemetry.write;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The index rows this process has already written: (device, partition) in {@code ts_kv_partitions}
 * and (device, key, partition) in {@code ts_kv_keys}. Each index row is then written once per
 * process instead of once per message. Bounded: the least recently used row is forgotten first,
 * which only costs one more (idempotent) index write. A row is added only after the write that
 * carried it succeeded; the store forgets them all when a write fails (a Cassandra that restarted
 * may have lost acknowledged writes not yet synced to its commit log).
 *
 * <p>Thread-safe; a short lock around an access-ordered map (a few hundred nanoseconds per lookup).
 *
 * <p>Not a Caffeine table like the other bounded per-key tables (docs/architecture.md, "Shared
 * helpers"), for now: this is the telemetry write path, one lookup per index row per message, and
 * the swap has not been measured against the bench yet (issue 27). Caffeine's lookups are
 * lock-free, but its writes allocate a node and its reads feed a buffer; what wins at 2,000 devices
 * must be shown by {@code bench/run.sh} before and after, not assumed.
 */
final class SeenIndexRows {

  private final Map<IndexRow, Boolean> seen;

  /**
   * @param maxSize most rows remembered, of both kinds together
   */
  SeenIndexRows(int maxSize) {
    this.seen =
        new LinkedHashMap<>(Math.min(maxSize, 1024), 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<IndexRow, Boolean> eldest) {
            return size() > maxSize;
          }
        };
  }

  /** The rows not known to be written, in their order: one lock for a whole message. */
  List<IndexRow> unseen(Collection<IndexRow> rows) {
    List<IndexRow> unseen = new ArrayList<>(0);
    synchronized (seen) {
      for (IndexRow row : rows) {
        if (seen.get(row) == null) {
          unseen.add(row);
        }
      }
    }
    return unseen;
  }

  /** Remembers that the rows are written. */
  void addAll(Iterable<IndexRow> rows) {
    synchronized (seen) {
      for (IndexRow row : rows) {
        seen.put(row, Boolean.TRUE);
      }
    }
  }

  /** Forgets {@code rows} (their index rows were deleted), so they are written again if needed. */
  void removeAll(Collection<IndexRow> rows) {
    synchronized (seen) {
      for (IndexRow row : rows) {
        seen.remove(row);
      }
    }
  }

  /** Forgets every row, so each is written again by the next message that needs it. */
  void clear() {
    synchronized (seen) {
      seen.clear();
    }
  }
}
