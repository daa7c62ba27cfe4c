/**
 * Step 5 and 6 of the message flow, the storage side: what a device message becomes in Cassandra
 * and how it gets there. {@link io.fieldline.dao.cassandra.telemetry.write.CassandraTelemetryStore}
 * (the {@link io.fieldline.common.port.TelemetryStore} port) turns a message into its rows ({@code
 * TelemetryInserts}: one {@code ts_kv} insert per value, plus the {@code IndexRow}s of buckets and
 * keys this process has not written yet, remembered in {@code SeenIndexRows}); {@code
 * WriteCoalescer} puts the rows of many devices' messages into one batch ({@code UnloggedBatches},
 * the one place batches are made), at most a few batches out at once, each holding a slot of the
 * global {@link io.fieldline.dao.cassandra.cql.WriteLimiter}.
 *
 * <p>Threads: the store is called on the device actors' (Pekko dispatcher) threads and never blocks
 * them; the coalescer's queue is guarded by one short lock, and batches complete on the driver's
 * I/O threads, which complete each message's stage (the actor then {@code pipeToSelf}s it). The
 * device actor, not this package, decides when a message is acknowledged.
 */
@NullMarked
package io.fieldline.dao.cassandra.telemetry.write;

import org.jspecify.annotations.NullMarked;
