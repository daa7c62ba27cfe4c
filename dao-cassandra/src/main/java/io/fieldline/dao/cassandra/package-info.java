/**
 * Cassandra storage for Fieldline: the tuned {@code CqlSession}, schema migrations, and the
 * Cassandra implementations of the storage ports of {@code io.fieldline.common}.
 *
 * <p>Other modules use only the types in this package. {@link
 * io.fieldline.dao.cassandra.CassandraStorage} is the one-call composition root: it builds the
 * session from the HOCON configuration, migrates the schema and creates every store. The schema,
 * its partitioning and what "stored" means are described in {@code docs/storage.md}.
 *
 * <p>Threads: every store method returns a {@link java.util.concurrent.CompletionStage} that
 * completes on a driver I/O thread; callers must not block in their callbacks. Constructors prepare
 * statements and block; call them at startup only.
 */
@NullMarked
package io.fieldline.dao.cassandra;

import org.jspecify.annotations.NullMarked;
