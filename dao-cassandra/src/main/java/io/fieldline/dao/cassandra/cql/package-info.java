/**
 * The last step before the driver, shared by every store: opening the tuned {@link
 * com.datastax.oss.driver.api.core.CqlSession} ({@link
 * io.fieldline.dao.cassandra.cql.CassandraSessionFactory}), the global bound on requests in flight
 * ({@link io.fieldline.dao.cassandra.cql.WriteLimiter}), the separate budget of client reads
 * ({@link io.fieldline.dao.cassandra.cql.ReadLimiter}), running a store's requests through it and
 * turning their outcome into one {@link io.fieldline.common.StoreException} ({@link
 * io.fieldline.dao.cassandra.cql.WriteRunner}, {@link io.fieldline.dao.cassandra.cql.StoreErrors},
 * {@link io.fieldline.dao.cassandra.cql.FailureEpisodes}), the storage meters ({@link
 * io.fieldline.dao.cassandra.cql.StoreMetrics}), and the CQL helpers: bind markers resolved by name
 * at prepare time, the typed {@code *_v} value columns, paged results read asynchronously.
 *
 * <p>In the message flow: a device actor calls the telemetry store ({@code telemetry.write}), whose
 * batches take a {@code WriteLimiter} slot here and go to the driver. Threads: nothing here blocks
 * except opening the session (startup); the limiter and the runner are lock-free and thread-safe,
 * and their completions run on the driver's I/O threads ({@code fieldline-cql-io-*}). Used by the
 * feature packages of this module, not by other modules.
 */
@NullMarked
package io.fieldline.dao.cassandra.cql;

import org.jspecify.annotations.NullMarked;
