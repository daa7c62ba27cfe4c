/**
 * Provisioned devices and their one credential each, the {@link
 * io.fieldline.common.device.DeviceRegistry} and {@link
 * io.fieldline.common.device.DeviceCredentialsStore} ports: {@link
 * io.fieldline.dao.cassandra.registry.CassandraDeviceRegistry} keeps them in Cassandra (the row in
 * {@code DeviceTable}, uniqueness of names and credentials by lightweight transactions in {@code
 * DeviceCreation}, {@code CredentialIndex} and {@code CredentialWrites}, MQTT_BASIC passwords by
 * bcrypt in {@code PasswordHashing}), and {@link
 * io.fieldline.dao.cassandra.registry.CachingDeviceRegistry} answers the credential lookups of step
 * 2 of the message flow (CONNECT) from memory in front of it.
 *
 * <p>Threads: the cache is asked on the MQTT event loops and never blocks them (a {@code
 * ConcurrentHashMap} of shared futures); the registry's stages complete on the driver's I/O
 * threads, or on the bcrypt threads, which are the only ones that hash or check a password.
 * Creates, replacements and deletes come from the REST API.
 */
@NullMarked
package io.fieldline.dao.cassandra.registry;

import org.jspecify.annotations.NullMarked;
