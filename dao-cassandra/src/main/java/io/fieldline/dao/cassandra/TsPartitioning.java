package io.fieldline.dao.cassandra;

import java.time.LocalDate;

/**
 * How time-series rows are split into Cassandra partitions: the {@code part} column of {@code
 * ts_kv} is the epoch-millisecond timestamp truncated, in UTC, to one of these units (ThingsBoard's
 * {@code TS_KV_PARTITIONING}). Coarser units mean fewer, larger partitions; see {@code
 * docs/storage.md} for the size trade-off. Immutable and thread-safe.
 */
public enum TsPartitioning {
  MINUTES,
  HOURS,
  DAYS,
  MONTHS,
  YEARS,
  /** A single partition per device: {@code part} is always 0. */
  INDEFINITE;

  private static final long MINUTE_MS = 60_000L;
  private static final long HOUR_MS = 60 * MINUTE_MS;
  private static final long DAY_MS = 24 * HOUR_MS;

  /** The partition a value with timestamp {@code ts} (epoch milliseconds) belongs to. */
  public long partitionOf(long ts) {
    switch (this) {
      case MINUTES:
        return Math.floorDiv(ts, MINUTE_MS) * MINUTE_MS;
      case HOURS:
        return Math.floorDiv(ts, HOUR_MS) * HOUR_MS;
      case DAYS:
        return Math.floorDiv(ts, DAY_MS) * DAY_MS;
      case MONTHS:
        return startOf(utcDay(ts).withDayOfMonth(1));
      case YEARS:
        return startOf(utcDay(ts).withDayOfYear(1));
      case INDEFINITE:
        return 0L;
    }
    throw new AssertionError(this);
  }

  /**
   * The first millisecond of the partition after the one starting at {@code partition}; {@link
   * Long#MAX_VALUE} for {@link #INDEFINITE}.
   */
  public long nextPartition(long partition) {
    switch (this) {
      case MINUTES:
        return partition + MINUTE_MS;
      case HOURS:
        return partition + HOUR_MS;
      case DAYS:
        return partition + DAY_MS;
      case MONTHS:
        return startOf(utcDay(partition).plusMonths(1)) + Math.floorMod(partition, DAY_MS);
      case YEARS:
        return startOf(utcDay(partition).plusYears(1)) + Math.floorMod(partition, DAY_MS);
      case INDEFINITE:
        return Long.MAX_VALUE;
    }
    throw new AssertionError(this);
  }

  // Calendar arithmetic on the UTC day alone: no time zone rules, nothing that outlives the call
  // (this runs for every stored value).
  private static LocalDate utcDay(long ts) {
    return LocalDate.ofEpochDay(Math.floorDiv(ts, DAY_MS));
  }

  private static long startOf(LocalDate day) {
    return day.toEpochDay() * DAY_MS;
  }
}
