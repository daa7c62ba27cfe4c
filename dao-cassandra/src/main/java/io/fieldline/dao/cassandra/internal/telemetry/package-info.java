/**
 * Helpers of the telemetry store and queries: the bounded memory of index rows already written
 * ({@code ts_kv_partitions}, {@code ts_kv_keys}), and the Java-side aggregation of rows into time
 * buckets. Not for other modules.
 */
@NullMarked
package io.fieldline.dao.cassandra.internal.telemetry;

import org.jspecify.annotations.NullMarked;
