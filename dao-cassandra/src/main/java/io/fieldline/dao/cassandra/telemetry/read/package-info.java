/**
 * The read side of telemetry, for the REST API: {@link
 * io.fieldline.dao.cassandra.telemetry.read.CassandraTelemetryQueries} (the {@link
 * io.fieldline.common.query.TelemetryQueries} port) answers keys, latest values ({@code
 * LatestValuesReader}: the newest row of each key, found through the {@code ts_kv_keys} index),
 * history, raw or aggregated in Java ({@code BucketAggregator}), and attributes. Not on the path of
 * an incoming message: reads start from an HTTP request, and from a device actor's first ask for
 * its latest values.
 *
 * <p>Threads: nothing blocks; each query is a chain of driver stages completing on the driver's I/O
 * threads ({@code fieldline-cql-io-*}), and an aggregation's buckets are confined to its query's
 * chain. Reads use the driver's default consistency in the {@code client-reads} profile; each query
 * made for a client takes a slot of the node's read budget ({@code cql.ReadLimiter}, never a
 * write-limiter slot); the actors' reads of their latest values go through the telemetry store.
 */
@NullMarked
package io.fieldline.dao.cassandra.telemetry.read;

import org.jspecify.annotations.NullMarked;
