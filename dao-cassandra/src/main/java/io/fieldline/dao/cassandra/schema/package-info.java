/**
 * The Cassandra schema as numbered migrations ({@code Migrations}), the migrator that applies the
 * missing ones at startup and records them in {@code schema_version} ({@link
 * io.fieldline.dao.cassandra.schema.SchemaMigrator}), and the data step of version 2 ({@link
 * io.fieldline.dao.cassandra.schema.KeyIndexBackfill}). {@link
 * io.fieldline.dao.cassandra.CassandraStorage} runs them before any store is built; not on the
 * message path.
 *
 * <p>Threads: everything here blocks (DDL waits for schema agreement, the backfill pages through a
 * table) and runs once, on the thread that starts the storage, never on a driver or event-loop
 * thread.
 */
@NullMarked
package io.fieldline.dao.cassandra.schema;

import org.jspecify.annotations.NullMarked;
