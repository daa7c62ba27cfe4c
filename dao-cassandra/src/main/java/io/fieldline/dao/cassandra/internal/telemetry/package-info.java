/**
 * Helpers of the telemetry store and queries: the bounded memory of partitions already recorded
 * in {@code ts_kv_partitions}, and the Java-side aggregation of rows into time buckets. Not for
 * other modules.
 */
@NullMarked
package io.fieldline.dao.cassandra.internal.telemetry;

import org.jspecify.annotations.NullMarked;
