/**
 * OTA packages in Cassandra ({@link io.fieldline.common.ota.OtaPackageStore}, implemented by {@link
 * io.fieldline.dao.cassandra.ota.CassandraOtaPackageStore}): the packages, their uploaded data in
 * fixed-size chunks, their unique titles and versions, and which device is assigned which package
 * as its firmware. Schema versions 6 (packages, devices' firmware) and 7 (device profiles'
 * firmware); the tables and their reasons are in docs/storage.md.
 *
 * <p>Threads: called from HTTP requests and MQTT sessions' firmware downloads, never blocking them;
 * writes take a slot of the global {@link io.fieldline.dao.cassandra.cql.WriteLimiter}, and every
 * stage completes on the driver's I/O threads.
 */
@NullMarked
package io.fieldline.dao.cassandra.ota;

import org.jspecify.annotations.NullMarked;
