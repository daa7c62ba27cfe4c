package io.fieldline.common.ratelimit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

/**
 * The bounded per-key tables of the limits (per source address, per user name): Caffeine caches of
 * at most {@code maxSize} keys. When full, Caffeine forgets the key least likely to be used again
 * (W-TinyLFU: recency and frequency; a flood of new keys forgets its own keys before the ones seen
 * often), which for a limit only means that key's budget starts full again. Housekeeping runs on
 * the calling thread (no background pool, nothing scheduled), on the caller's nano clock.
 *
 * <p>Update an entry through {@code asMap().compute}: that is a write, so the entry's expiry is
 * computed from its value after the change.
 */
public final class BoundedTables {

  private BoundedTables() {}

  /** A table of at most {@code maxSize} keys, none of which expire. */
  public static <K, V> Cache<K, V> bySize(int maxSize, LongSupplier nanoClock) {
    return builder(maxSize, nanoClock).build();
  }

  /**
   * A table of at most {@code maxSize} keys, each forgotten once it is idle: {@code idleInNanos} of
   * its value after each write (0 or less: at once), reads leaving it unchanged.
   */
  public static <K, V> Cache<K, V> idleAfter(
      int maxSize, LongSupplier nanoClock, ToLongFunction<V> idleInNanos) {
    return builder(maxSize, nanoClock)
        .expireAfter(
            new Expiry<K, V>() {
              @Override
              public long expireAfterCreate(K key, V value, long currentTime) {
                return Math.max(0, idleInNanos.applyAsLong(value));
              }

              @Override
              public long expireAfterUpdate(
                  K key, V value, long currentTime, long currentDuration) {
                return Math.max(0, idleInNanos.applyAsLong(value));
              }

              @Override
              public long expireAfterRead(K key, V value, long currentTime, long currentDuration) {
                return currentDuration;
              }
            })
        .build();
  }

  /**
   * Keys held now and not idle (for gauges and tests). Counted, not estimated: Caffeine removes an
   * idle key when its timer wheel's bucket (about a second wide) passes, while reads and this count
   * treat it as gone from its exact expiry on. O(keys): for gauges, not for request paths.
   */
  public static int size(Cache<?, ?> table) {
    table.cleanUp();
    int size = 0;
    for (Object ignored : table.asMap().keySet()) {
      size++;
    }
    return size;
  }

  private static Caffeine<Object, Object> builder(int maxSize, LongSupplier nanoClock) {
    return Caffeine.newBuilder()
        .maximumSize(maxSize)
        .executor(Runnable::run)
        .ticker(nanoClock::getAsLong);
  }
}
