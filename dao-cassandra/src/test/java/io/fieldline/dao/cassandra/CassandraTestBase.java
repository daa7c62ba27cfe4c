package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.dao.cassandra.cql.CassandraSessionFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Base of the integration tests: the JVM's shared real Cassandra node, one keyspace per test class
 * ({@code it_<class name>}), migrated once per class, and a session built the production way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class CassandraTestBase {

  protected static final Duration TIMEOUT = Duration.ofSeconds(60);

  protected EmbeddedCassandra cassandra;
  protected Config root;
  protected CassandraConfig config;
  protected CqlSession session;
  protected String keyspace;
  protected final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  /** Extra HOCON for this class, e.g. {@code fieldline.cassandra.ts-partitioning = DAYS}. */
  protected String extraConfig() {
    return "";
  }

  @BeforeAll
  protected void connectAndMigrate() {
    cassandra = SharedCassandra.get();
    keyspace = "it_" + getClass().getSimpleName().toLowerCase(Locale.ROOT);
    root =
        ConfigFactory.parseString(
                "fieldline.cassandra.keyspace = "
                    + keyspace
                    + "\n"
                    // The test node shares two cores with the build: be patient.
                    + "datastax-java-driver.basic.request.timeout = 30 seconds\n"
                    + "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                    + cassandra.localDatacenter()
                    + "\n"
                    + extraConfig())
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    config = CassandraConfig.from(root);
    session = CassandraSessionFactory.open(root, config, List.of(cassandra.cqlAddress()), registry);
    CassandraStorage.migrateSchema(session, config);
  }

  @AfterAll
  protected void closeSession() {
    if (session != null) {
      session.close();
    }
  }

  protected void truncate(String... tables) {
    for (String table : tables) {
      session.execute("TRUNCATE " + keyspace + "." + table);
    }
  }

  protected static <T> T await(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new AssertionError("stage did not complete normally", e);
    }
  }

  protected double counter(String name) {
    return registry.find(name).counters().stream().mapToDouble(c -> c.count()).sum();
  }
}
