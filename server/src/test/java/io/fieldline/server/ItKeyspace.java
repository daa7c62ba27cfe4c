package io.fieldline.server;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraStorage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The one keyspace the server's integration tests share, handed to each test class migrated and
 * empty.
 *
 * <p>Migrating a keyspace costs 40 s of DDL on the test node with the driver's default schema
 * debouncer (about a second per table), a few seconds without it, which every test class used to
 * pay; truncating the tables of an already migrated keyspace costs well under a second. A test
 * class therefore starts on exactly what a fresh keyspace would give it (the schema, no rows), only
 * sooner. Failsafe runs the module's ITs in two JVMs, each with its own Cassandra node (and so its
 * own keyspace of this name); the classes of one JVM run one after another, so no two classes use a
 * keyspace at the same time.
 */
public final class ItKeyspace {

  /** The shared keyspace's name. */
  public static final String NAME = "it_server";

  /** Kept across classes: it records the migrations, so the next server does not redo them. */
  private static final String VERSIONS_TABLE = "schema_version";

  private static final Duration TRUNCATE_TIMEOUT = Duration.ofSeconds(60);

  private static @Nullable CqlSession admin;

  private ItKeyspace() {}

  /**
   * Migrates the shared keyspace if needed and empties every table of it that has rows.
   *
   * @return the keyspace's name, for {@code fieldline.cassandra.keyspace}
   */
  public static String fresh(EmbeddedCassandra cassandra) {
    CqlSession admin = admin(cassandra);
    CassandraStorage.migrateSchema(
        admin,
        CassandraConfig.from(
            ConfigFactory.parseString("fieldline.cassandra.keyspace = " + NAME)
                .withFallback(ConfigFactory.load())
                .resolve()));
    for (String table : tables(admin)) {
      if (!table.equals(VERSIONS_TABLE) && hasRows(admin, table)) {
        admin.execute(
            SimpleStatement.newInstance("TRUNCATE " + NAME + "." + table)
                .setTimeout(TRUNCATE_TIMEOUT));
      }
    }
    return NAME;
  }

  /**
   * The JVM's one administrative session, opened by the first class and closed when the JVM exits:
   * opening and closing one per class cost more than the truncation. The node keeps its address
   * when a test restarts it, and the session reconnects.
   */
  private static synchronized CqlSession admin(EmbeddedCassandra cassandra) {
    if (admin == null) {
      CqlSession session =
          CqlSession.builder()
              .addContactPoint(cassandra.cqlAddress())
              .withLocalDatacenter(cassandra.localDatacenter())
              .withConfigLoader(ItDriver.loader())
              .build();
      Runtime.getRuntime().addShutdownHook(new Thread(session::close, "it-keyspace-close"));
      admin = session;
    }
    return admin;
  }

  /**
   * Whether a reader finds a row in the table. A TRUNCATE costs the node a flush and a discard
   * (about 150 ms on the test node), and most tables are already empty when the next class comes:
   * an empty table is left alone. Rows already deleted or expired do not count, as for any reader.
   */
  private static boolean hasRows(CqlSession admin, String table) {
    return admin
            .execute(
                SimpleStatement.newInstance("SELECT * FROM " + NAME + "." + table + " LIMIT 1")
                    .setTimeout(TRUNCATE_TIMEOUT))
            .one()
        != null;
  }

  private static List<String> tables(CqlSession admin) {
    List<String> tables = new ArrayList<>();
    for (Row row :
        admin.execute(
            SimpleStatement.newInstance(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", NAME))) {
      tables.add(row.getString(0));
    }
    return tables;
  }
}
