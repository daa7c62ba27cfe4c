package io.fieldline.common.query;

import java.util.Objects;
import java.util.Set;

/**
 * A time-series history request of {@link TelemetryQueries#history}, with ThingsBoard's semantics:
 * values of {@code keys} with {@code startTs <= ts < endTs} (the bounds ThingsBoard's Cassandra DAO
 * uses). Validated on construction, so a store only ever sees a query it can answer.
 *
 * @param keys the keys to read; must not be empty
 * @param startTs inclusive start, epoch milliseconds
 * @param endTs exclusive end, epoch milliseconds
 * @param interval bucket width in milliseconds for aggregations (ignored for {@link
 *     Aggregation#NONE}); at most {@link #MAX_BUCKETS} buckets per query
 * @param limit most raw values per key for {@link Aggregation#NONE} (ignored otherwise)
 * @param aggregation how values are reduced
 * @param order timestamp order of each key's values
 */
public record HistoryQuery(
    Set<String> keys,
    long startTs,
    long endTs,
    long interval,
    int limit,
    Aggregation aggregation,
    SortOrder order) {

  /**
   * ThingsBoard's {@code DATABASE_TS_MAX_INTERVALS}: most buckets one aggregated query may ask for.
   */
  public static final int MAX_BUCKETS = 700;

  /** ThingsBoard's default {@code limit}. */
  public static final int DEFAULT_LIMIT = 100;

  /**
   * @throws IllegalArgumentException if keys is empty, {@code limit < 1}, {@code endTs < startTs},
   *     or an aggregation has {@code interval < 1} or more than {@link #MAX_BUCKETS} buckets
   */
  public HistoryQuery {
    keys = Set.copyOf(keys);
    Objects.requireNonNull(aggregation, "aggregation");
    Objects.requireNonNull(order, "order");
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("keys must not be empty");
    }
    if (endTs < startTs) {
      throw new IllegalArgumentException("endTs must not be before startTs");
    }
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1");
    }
    if (aggregation != Aggregation.NONE) {
      if (interval < 1) {
        throw new IllegalArgumentException("interval must be >= 1 ms for " + aggregation);
      }
      long buckets = bucketCount(startTs, endTs, interval);
      if (buckets > MAX_BUCKETS) {
        throw new IllegalArgumentException(
            "too many intervals: " + buckets + " > " + MAX_BUCKETS + "; use a larger interval");
      }
    }
  }

  /** Raw values, newest first, at most {@link #DEFAULT_LIMIT} per key. */
  public static HistoryQuery raw(Set<String> keys, long startTs, long endTs) {
    return new HistoryQuery(
        keys, startTs, endTs, 0, DEFAULT_LIMIT, Aggregation.NONE, SortOrder.DESC);
  }

  /** Aggregated values, newest bucket first. */
  public static HistoryQuery aggregated(
      Set<String> keys, long startTs, long endTs, long interval, Aggregation aggregation) {
    return new HistoryQuery(
        keys, startTs, endTs, interval, DEFAULT_LIMIT, aggregation, SortOrder.DESC);
  }

  /** A copy with another limit. */
  public HistoryQuery withLimit(int newLimit) {
    return new HistoryQuery(keys, startTs, endTs, interval, newLimit, aggregation, order);
  }

  /** A copy with another order. */
  public HistoryQuery withOrder(SortOrder newOrder) {
    return new HistoryQuery(keys, startTs, endTs, interval, limit, aggregation, newOrder);
  }

  /**
   * Number of {@code interval} buckets covering {@code [startTs, endTs)}, the last one partial;
   * what an aggregating store allocates per key.
   */
  public static long bucketCount(long startTs, long endTs, long interval) {
    long span = endTs - startTs;
    return span / interval + (span % interval == 0 ? 0 : 1);
  }
}
