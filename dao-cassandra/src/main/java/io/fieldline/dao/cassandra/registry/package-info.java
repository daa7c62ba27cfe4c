/**
 * Provisioned devices and their access tokens, the {@link io.fieldline.common.DeviceRegistry} port:
 * {@link io.fieldline.dao.cassandra.registry.CassandraDeviceRegistry} keeps them in Cassandra
 * (uniqueness of names and tokens by lightweight transactions), and {@link
 * io.fieldline.dao.cassandra.registry.CachingDeviceRegistry} answers the token lookups of step 2 of
 * the message flow (CONNECT) from memory in front of it.
 *
 * <p>Threads: the cache is asked on the MQTT event loops and never blocks them (a {@code
 * ConcurrentHashMap} of shared futures); the registry's stages complete on the driver's I/O
 * threads. Creates and deletes come from the REST API.
 */
@NullMarked
package io.fieldline.dao.cassandra.registry;

import org.jspecify.annotations.NullMarked;
