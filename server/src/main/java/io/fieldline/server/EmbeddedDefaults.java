package io.fieldline.server;

import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.EmbeddedCassandraConfig;
import io.fieldline.dao.cassandra.CassandraConfig;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default: with no Cassandra contact point configured, start a real Cassandra as a
 * child JVM with its data under {@code <data-dir>/cassandra}.
 */
final class EmbeddedDefaults {

  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedDefaults.class);

  private EmbeddedDefaults() {}

  static @Nullable EmbeddedCassandra startIfNeeded(ServerConfig server, CassandraConfig cassandra) {
    if (!cassandra.contactPoints().isEmpty()) {
      LOG.info("[cassandra] using external Cassandra at {}", cassandra.contactPoints());
      return null;
    }
    if (!server.embeddedCassandra()) {
      throw new IllegalArgumentException(
          "no Cassandra: set FIELDLINE_CASSANDRA_CONTACT_POINTS or enable the embedded node");
    }
    EmbeddedCassandraConfig.Profile profile =
        server.embeddedProfile().equals("test")
            ? EmbeddedCassandraConfig.Profile.TEST
            : EmbeddedCassandraConfig.Profile.SERVER;
    Path workDir = server.dataDir().toAbsolutePath().resolve("cassandra");
    EmbeddedCassandraConfig config =
        EmbeddedCassandraConfig.defaults(workDir, profile)
            .withCqlPort(server.embeddedCqlPort())
            .withStoragePort(server.embeddedStoragePort())
            .withHeap(server.embeddedHeap())
            .withStartTimeout(server.embeddedStartTimeout())
            .withTimerSlack(server.embeddedTimerSlack());
    if (!server.cassandraClasspathFile().isEmpty()) {
      config = config.withClasspathFile(Path.of(server.cassandraClasspathFile()));
    }
    LOG.info("[cassandra] starting embedded Cassandra in {} (first start takes ~10 s)", workDir);
    EmbeddedCassandra node = EmbeddedCassandra.create(config);
    // Stopped by FieldlineServer.close(), after the last write has drained.
    node.start();
    return node;
  }
}
