package io.fieldline.common.query;

/**
 * How history values are reduced, as in ThingsBoard's {@code agg} parameter. {@link #NONE} returns
 * raw values; the others split the range into {@code interval}-millisecond buckets and return one
 * value per non-empty bucket, stamped with the bucket's midpoint.
 *
 * <p>MIN, MAX, AVG and SUM use numeric (long and double) values only and skip buckets without any;
 * COUNT counts values of every type. MIN, MAX and SUM stay longs when every value in the bucket is
 * a long (a long SUM that overflows becomes a double); AVG is always a double.
 */
public enum Aggregation {
  NONE,
  MIN,
  MAX,
  AVG,
  SUM,
  COUNT
}
