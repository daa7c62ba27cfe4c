package io.fieldline.common.ratelimit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import io.github.bucket4j.local.SynchronizationStrategy;
import java.util.function.LongSupplier;

/**
 * Builds the Bucket4j buckets of every limit: greedy refill (continuous, exact in nanoseconds), on
 * the caller's nano clock, so that a test moves time by hand. Buckets start full.
 */
public final class TokenBuckets {

  private TokenBuckets() {}

  /** A thread-safe bucket (lock-free), for a bucket several threads share. */
  public static Bucket shared(Rate rate, LongSupplier nanoClock) {
    return build(rate, nanoClock, SynchronizationStrategy.LOCK_FREE);
  }

  /**
   * A bucket for one thread at a time (no synchronisation): confined to one event loop, or touched
   * only under its owner's lock.
   */
  public static Bucket confined(Rate rate, LongSupplier nanoClock) {
    return build(rate, nanoClock, SynchronizationStrategy.NONE);
  }

  /** Nanoseconds until {@code bucket} holds one token; zero when it holds one now. */
  public static long nanosUntilOne(Bucket bucket) {
    return bucket.estimateAbilityToConsume(1).getNanosToWaitForRefill();
  }

  /** Nanoseconds until {@code bucket} is full again; zero when it is full. */
  public static long nanosUntilFull(Bucket bucket, Rate rate) {
    return bucket.estimateAbilityToConsume(rate.burst()).getNanosToWaitForRefill();
  }

  private static Bucket build(Rate rate, LongSupplier nanoClock, SynchronizationStrategy sync) {
    return Bucket.builder()
        .addLimit(limit -> limit.capacity(rate.burst()).refillGreedy(1, rate.refill()))
        .withCustomTimePrecision(clock(nanoClock))
        .withSynchronizationStrategy(sync)
        .build();
  }

  private static TimeMeter clock(LongSupplier nanoClock) {
    return new TimeMeter() {
      @Override
      public long currentTimeNanos() {
        return nanoClock.getAsLong();
      }

      @Override
      public boolean isWallClockBased() {
        return false;
      }
    };
  }
}
