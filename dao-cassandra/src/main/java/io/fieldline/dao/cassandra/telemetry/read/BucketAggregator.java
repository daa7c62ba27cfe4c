package io.fieldline.dao.cassandra.telemetry.read;

import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.Aggregation;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.SortOrder;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Folds the raw values of one key into {@code interval} buckets over {@code [startTs, endTs)} and
 * renders one aggregated value per non-empty bucket at the bucket's midpoint (see {@link
 * Aggregation} for the typing rules). Confined to one query's callback chain.
 */
final class BucketAggregator {

  private final Aggregation aggregation;
  private final long startTs;
  private final long endTs;
  private final long interval;
  private final Bucket[] buckets;

  BucketAggregator(Aggregation aggregation, long startTs, long endTs, long interval) {
    if (aggregation == Aggregation.NONE) {
      throw new IllegalArgumentException("NONE is not an aggregation");
    }
    this.aggregation = aggregation;
    this.startTs = startTs;
    this.endTs = endTs;
    this.interval = interval;
    this.buckets = new Bucket[(int) HistoryQuery.bucketCount(startTs, endTs, interval)];
  }

  /** Adds one value; values outside {@code [startTs, endTs)} are ignored. */
  void add(long ts, KvEntry kv) {
    if (ts < startTs || ts >= endTs) {
      return;
    }
    int index = (int) ((ts - startTs) / interval);
    Bucket bucket = buckets[index];
    if (bucket == null) {
      bucket = new Bucket();
      buckets[index] = bucket;
    }
    bucket.add(kv);
  }

  /** One value per non-empty bucket, ordered by time as asked. */
  List<TsKvEntry> result(String key, SortOrder order) {
    List<TsKvEntry> out = new ArrayList<>();
    for (int i = 0; i < buckets.length; i++) {
      int index = order == SortOrder.ASC ? i : buckets.length - 1 - i;
      Bucket bucket = buckets[index];
      if (bucket == null) {
        continue;
      }
      long from = startTs + index * interval;
      long to = Math.min(from + interval, endTs);
      long midpoint = from + (to - from) / 2;
      KvEntry value = bucket.value(key);
      if (value != null) {
        out.add(new TsKvEntry(midpoint, value));
      }
    }
    return out;
  }

  private final class Bucket {
    long count;
    long numeric;
    boolean allLong = true;
    boolean longSumOverflowed;
    long longSum;
    double doubleSum;
    long longMin = Long.MAX_VALUE;
    long longMax = Long.MIN_VALUE;
    double doubleMin = Double.POSITIVE_INFINITY;
    double doubleMax = Double.NEGATIVE_INFINITY;

    void add(KvEntry kv) {
      count++;
      if (kv instanceof KvEntry.LongKv) {
        long v = ((KvEntry.LongKv) kv).number();
        numeric++;
        if (!longSumOverflowed) {
          try {
            longSum = Math.addExact(longSum, v);
          } catch (ArithmeticException overflow) {
            longSumOverflowed = true;
          }
        }
        longMin = Math.min(longMin, v);
        longMax = Math.max(longMax, v);
        addDouble(v);
      } else if (kv instanceof KvEntry.DoubleKv) {
        numeric++;
        allLong = false;
        addDouble(((KvEntry.DoubleKv) kv).number());
      }
    }

    private void addDouble(double v) {
      doubleSum += v;
      doubleMin = Math.min(doubleMin, v);
      doubleMax = Math.max(doubleMax, v);
    }

    @Nullable KvEntry value(String key) {
      if (aggregation == Aggregation.COUNT) {
        return KvEntry.of(key, count);
      }
      if (numeric == 0) {
        return null;
      }
      switch (aggregation) {
        case MIN:
          return allLong ? KvEntry.of(key, longMin) : KvEntry.of(key, doubleMin);
        case MAX:
          return allLong ? KvEntry.of(key, longMax) : KvEntry.of(key, doubleMax);
        case SUM:
          return allLong && !longSumOverflowed
              ? KvEntry.of(key, longSum)
              : KvEntry.of(key, doubleSum);
        case AVG:
          return KvEntry.of(key, doubleSum / numeric);
        default:
          throw new AssertionError(aggregation);
      }
    }
  }
}
