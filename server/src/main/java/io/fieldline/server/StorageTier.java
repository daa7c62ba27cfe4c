package io.fieldline.server;

import com.typesafe.config.Config;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The storage tier: a Cassandra child JVM when no contact point is configured (the embedded
 * default), then the dao, built by its one entry point {@link CassandraStorage} (session, schema
 * with its data steps, stores, registry, queries). Blocks while Cassandra starts.
 *
 * @param embedded the embedded node, or null when an existing Cassandra is used
 * @param storage every storage port, and the pressure gauges the transport watches
 */
record StorageTier(@Nullable EmbeddedCassandra embedded, CassandraStorage storage) {

  static StorageTier start(
      Config root,
      ServerConfig config,
      CassandraConfig cassandraConfig,
      MeterRegistry metrics,
      StopSteps stops) {
    EmbeddedCassandra node = EmbeddedDefaults.startIfNeeded(config, cassandraConfig);
    if (node != null) {
      stops.add("embedded Cassandra", node::stop);
    }
    List<InetSocketAddress> contact = node == null ? List.of() : List.of(node.cqlAddress());
    CassandraStorage storage = CassandraStorage.start(root, cassandraConfig, metrics, contact);
    // The device actors drained before this runs; a write finishing later could not be
    // acknowledged any more (the transport is closed), so close at once.
    stops.add("Cassandra storage", () -> storage.close(Duration.ZERO));
    return new StorageTier(node, storage);
  }
}
