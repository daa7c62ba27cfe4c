/**
 * Payloads that could not be parsed, kept raw: the transport acknowledges an invalid JSON payload
 * and hands it to the {@link io.fieldline.common.deadletter.DeadLetterStore} port instead of the
 * device, so the device does not resend a poison message forever; the REST API reads them back
 * through {@link io.fieldline.common.deadletter.DeadLetterQueries}. Both are {@link
 * io.fieldline.dao.cassandra.deadletter.CassandraDeadLetterStore}.
 *
 * <p>Threads: called on the MQTT event loop (writes) and from HTTP requests (reads), never blocking
 * them; writes take a slot of the global {@link io.fieldline.dao.cassandra.cql.WriteLimiter}, and
 * every stage completes on the driver's I/O threads.
 */
@NullMarked
package io.fieldline.dao.cassandra.deadletter;

import org.jspecify.annotations.NullMarked;
