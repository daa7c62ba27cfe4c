package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.dao.cassandra.cql.CassandraSessionFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Base of the integration tests: the JVM's shared real Cassandra node, one keyspace shared by the
 * module's test classes ({@value #KEYSPACE}), migrated by the first and emptied for each (a
 * TRUNCATE per table is well under a second; migrating a keyspace takes 12–15 s of DDL on the test
 * node), and a session built the production way. The classes run one after another in one JVM.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class CassandraTestBase {

  protected static final Duration TIMEOUT = Duration.ofSeconds(60);

  /** The shared keyspace. */
  protected static final String KEYSPACE = "it_dao";

  /**
   * Driver settings every test session of this module uses (HOCON lines); production keeps the
   * defaults.
   *
   * <ul>
   *   <li>A patient request timeout: the test node shares two cores with the build.
   *   <li>No schema debouncer window: the driver completes a schema-changing statement only after
   *       refreshing its schema metadata, and that refresh first waits out the window (1 s by
   *       default) in case more changes come: a second per CREATE TABLE, about 40 s per migrated
   *       keyspace on the test node.
   *   <li>A quiet period of 250 ms instead of 2 s when a closing session's Netty groups shut down:
   *       every {@code close()} of a session waited for it. Not zero: the driver adds a listener to
   *       its own close task after submitting it, and an executor that terminated meanwhile makes
   *       Netty log an ERROR.
   * </ul>
   */
  public static final String TEST_DRIVER_CONFIG =
      String.join(
          "\n",
          "datastax-java-driver.basic.request.timeout = 30 seconds",
          "datastax-java-driver.advanced.metadata.schema.debouncer.window = 0 seconds",
          "datastax-java-driver.advanced.netty.io-group.shutdown"
              + " { quiet-period = 250, timeout = 15000, unit = MILLISECONDS }",
          "datastax-java-driver.advanced.netty.admin-group.shutdown"
              + " { quiet-period = 250, timeout = 15000, unit = MILLISECONDS }",
          "");

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
    keyspace = KEYSPACE;
    root =
        ConfigFactory.parseString(
                "fieldline.cassandra.keyspace = "
                    + keyspace
                    + "\n"
                    + TEST_DRIVER_CONFIG
                    + "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                    + cassandra.localDatacenter()
                    + "\n"
                    + extraConfig())
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    config = CassandraConfig.from(root);
    session = CassandraSessionFactory.open(root, config, List.of(cassandra.cqlAddress()), registry);
    CassandraStorage.migrateSchema(session, config);
    emptyTables();
  }

  /**
   * Truncates every table that has rows but {@code schema_version}, which keeps the keyspace
   * migrated.
   */
  private void emptyTables() {
    for (Row row :
        session.execute(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", keyspace)) {
      String table = row.getString(0);
      if (!"schema_version".equals(table) && hasRows(table)) {
        session.execute(
            SimpleStatement.newInstance("TRUNCATE " + keyspace + "." + table).setTimeout(TIMEOUT));
      }
    }
  }

  /**
   * Whether a reader finds a row: a TRUNCATE costs the node a flush and a discard, and most tables
   * are already empty when the next class comes.
   */
  private boolean hasRows(String table) {
    return session
            .execute(
                SimpleStatement.newInstance("SELECT * FROM " + keyspace + "." + table + " LIMIT 1")
                    .setTimeout(TIMEOUT))
            .one()
        != null;
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
