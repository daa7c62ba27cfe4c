/**
 * Persistent server-side RPCs ({@link io.fieldline.common.rpc.PersistentRpcStore}, implemented by
 * {@link io.fieldline.dao.cassandra.rpc.CassandraRpcStore}): stored when the REST API takes one,
 * moved through their statuses as the device's session reports them, listed and read back over
 * REST, offered again to the device when it next subscribes ({@code pending}).
 *
 * <p>Threads: called from HTTP requests, the server's RPC service and MQTT sessions' callbacks,
 * never blocking them; writes take a slot of the global {@link
 * io.fieldline.dao.cassandra.cql.WriteLimiter}, and every stage completes on the driver's I/O
 * threads.
 */
@NullMarked
package io.fieldline.dao.cassandra.rpc;

import org.jspecify.annotations.NullMarked;
