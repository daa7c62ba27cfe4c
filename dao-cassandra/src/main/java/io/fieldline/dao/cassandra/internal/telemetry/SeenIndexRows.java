package io.fieldline.dao.cassandra.internal.telemetry;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The (device, partition) pairs this process has already recorded in {@code ts_kv_partitions},
 * so the index row is written once per partition per process instead of once per message. Bounded:
 * the least recently used pair is forgotten first, which only costs one more (idempotent) index
 * write. A pair is added only after the write that carried it succeeded.
 *
 * <p>Thread-safe; a short lock around an access-ordered map (a few hundred nanoseconds per message).
 */
public final class SeenPartitions {

  private final Map<Key, Boolean> seen;

  /** @param maxSize most pairs remembered */
  public SeenPartitions(int maxSize) {
    this.seen =
        new LinkedHashMap<>(Math.min(maxSize, 1024), 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<Key, Boolean> eldest) {
            return size() > maxSize;
          }
        };
  }

  /** Whether the pair is known to be recorded. */
  public boolean contains(UUID deviceId, long partition) {
    synchronized (seen) {
      return seen.get(new Key(deviceId, partition)) != null;
    }
  }

  /** Remembers that the pair is recorded. */
  public void add(UUID deviceId, long partition) {
    synchronized (seen) {
      seen.put(new Key(deviceId, partition), Boolean.TRUE);
    }
  }

  /** Number of pairs remembered. */
  public int size() {
    synchronized (seen) {
      return seen.size();
    }
  }

  private record Key(UUID deviceId, long partition) {}
}
