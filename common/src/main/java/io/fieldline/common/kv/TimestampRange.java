package io.fieldline.common.kv;

/**
 * The device timestamps Fieldline can store: epoch milliseconds from {@link #MIN} to {@link #MAX}
 * (about 290,000 years either side of 1970). The store writes a value's timestamp also as its
 * Cassandra write time in microseconds ({@code USING TIMESTAMP ts*1000}), so a timestamp is
 * storable exactly when {@code ts * 1000} fits a signed 64-bit integer. The device transports'
 * {@code PayloadParser} refuses anything outside at parse time (the message is dead-lettered and
 * acknowledged) and the Cassandra store refuses the same range, so the two cannot drift apart.
 */
public final class TimestampRange {

  /** Earliest storable timestamp, epoch milliseconds: {@code -(2^63 - 1) / 1000}, rounded down. */
  public static final long MIN = -(Long.MAX_VALUE / 1000L);

  /** Latest storable timestamp, epoch milliseconds: {@code (2^63 - 1) / 1000}, rounded down. */
  public static final long MAX = Long.MAX_VALUE / 1000L;

  private TimestampRange() {}

  /** Whether {@code tsMillis} is within {@link #MIN}..{@link #MAX}, both inclusive. */
  public static boolean contains(long tsMillis) {
    return tsMillis >= MIN && tsMillis <= MAX;
  }
}
