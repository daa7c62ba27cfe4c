/**
 * Cassandra storage for Fieldline: the Cassandra implementations of the storage ports of {@code
 * io.fieldline.common} ({@code TelemetryStore}, {@code TelemetryQueries}, {@code DeviceRegistry},
 * {@code DeadLetterStore}, {@code DeadLetterQueries}), the tuned {@code CqlSession} and the schema.
 *
 * <p>Other modules use only this package: {@link io.fieldline.dao.cassandra.CassandraStorage}
 * builds everything in one call (session, schema migration, stores) and hands out the ports; {@link
 * io.fieldline.dao.cassandra.CassandraConfig} is the validated {@code fieldline.cassandra} block
 * ({@link io.fieldline.dao.cassandra.TsPartitioning} is one of its settings). The feature packages
 * follow the message: {@code telemetry.write} (what a message becomes and how it is batched),
 * {@code cql} (the global request bound, error translation, the session), {@code telemetry.read}
 * (REST reads), {@code registry} (devices and tokens, CONNECT), {@code deadletter}, {@code schema}.
 * They depend on this package's configuration, never on {@code CassandraStorage}, and not in
 * cycles. The schema, its partitioning and what "stored" means are described in {@code
 * docs/storage.md}.
 *
 * <p>Threads: every port method returns a {@link java.util.concurrent.CompletionStage} that
 * completes on a driver I/O thread ({@code fieldline-cql-io-*}); callers must not block in their
 * callbacks. {@code CassandraStorage.start} connects, migrates and prepares statements, and blocks:
 * call it at startup only.
 */
@NullMarked
package io.fieldline.dao.cassandra;

import org.jspecify.annotations.NullMarked;
