package io.fieldline.common.ratelimit;

import com.github.benmanes.caffeine.cache.Cache;
import io.github.bucket4j.Bucket;
import java.util.function.LongSupplier;

/**
 * One token bucket per key (a source address, say), of one {@link Rate}, in a bounded table. A key
 * is held only while its bucket is not full: it is forgotten when it refills (nothing would
 * change), or when the table is full and Caffeine picks it (its bucket starts full again if it
 * comes back). Thread-safe: each key's bucket is changed only inside the table's {@code compute}
 * for that key.
 *
 * @param <K> the key
 */
public final class KeyedBuckets<K> {

  private final Rate rate;
  private final LongSupplier nanoClock;
  private final Cache<K, Bucket> buckets;

  /**
   * @param maxKeys keys held at most
   * @param nanoClock as {@link System#nanoTime()}
   */
  public KeyedBuckets(Rate rate, int maxKeys, LongSupplier nanoClock) {
    this.rate = rate;
    this.nanoClock = nanoClock;
    this.buckets =
        BoundedTables.idleAfter(
            maxKeys, nanoClock, bucket -> TokenBuckets.nanosUntilFull(bucket, rate));
  }

  /** Takes a token of {@code key} if it has one. */
  public boolean tryTake(K key) {
    boolean[] taken = {false};
    buckets
        .asMap()
        .compute(
            key,
            (k, bucket) -> {
              Bucket b = bucket == null ? TokenBuckets.confined(rate, nanoClock) : bucket;
              taken[0] = b.tryConsume(1);
              return b;
            });
    return taken[0];
  }

  /** Takes a token of {@code key} even if it has none: its next token comes one refill later. */
  public void take(K key) {
    buckets
        .asMap()
        .compute(
            key,
            (k, bucket) -> {
              Bucket b = bucket == null ? TokenBuckets.confined(rate, nanoClock) : bucket;
              b.consumeIgnoringRateLimits(1);
              return b;
            });
  }

  /** Nanoseconds until {@code key} has a token; zero when it has one now. */
  public long nanosUntilToken(K key) {
    long[] wait = {0};
    // computeIfPresent: the bucket is read under the key's lock, and its expiry is left as it was.
    buckets
        .asMap()
        .computeIfPresent(
            key,
            (k, bucket) -> {
              wait[0] = TokenBuckets.nanosUntilOne(bucket);
              return bucket;
            });
    return wait[0];
  }

  /** Forgets the keys whose bucket refilled; called now and then. */
  public void sweep() {
    buckets.cleanUp();
  }

  /** Keys held now. */
  public int tracked() {
    return BoundedTables.size(buckets);
  }
}
