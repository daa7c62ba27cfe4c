/**
 * Runs a real Apache Cassandra 5.0 node in a child JVM on 127.0.0.1: for integration tests ({@link
 * io.fieldline.cassandra.embedded.SharedCassandra}), for the server's embedded default and for
 * scripts ({@link io.fieldline.cassandra.embedded.EmbeddedCassandraMain}). The entry points are
 * {@link io.fieldline.cassandra.embedded.EmbeddedCassandraConfig} and {@link
 * io.fieldline.cassandra.embedded.EmbeddedCassandra}; the package-private classes generate the
 * configuration files and the command line and clean up after dead owners. cassandra-all is never
 * on this module's classpath.
 */
@NullMarked
package io.fieldline.cassandra.embedded;

import org.jspecify.annotations.NullMarked;
