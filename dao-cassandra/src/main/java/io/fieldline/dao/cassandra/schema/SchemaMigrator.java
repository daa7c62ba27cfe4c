package io.fieldline.dao.cassandra.schema;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a keyspace to the newest schema version: creates the keyspace and the {@code
 * schema_version} table if needed, then applies each migration not recorded there, in order, and
 * records it. Every statement is idempotent, so a migration interrupted half-way is simply applied
 * again on the next start.
 *
 * <p>Blocking (DDL waits for schema agreement); runs once at startup on the caller's thread, never
 * on a driver thread. On a multi-node cluster's very first start, let one node migrate (the others
 * with {@code create-schema = false}) so concurrent DDL cannot race.
 */
public final class SchemaMigrator {

  private static final Logger LOG = LoggerFactory.getLogger(SchemaMigrator.class);
  private static final Duration DDL_TIMEOUT = Duration.ofSeconds(60);

  private final CqlSession session;
  private final String keyspace;
  private final List<Migration> migrations;

  /** A migrator for Fieldline's own migrations. */
  public SchemaMigrator(CqlSession session, String keyspace) {
    this(session, keyspace, Migrations.ALL);
  }

  SchemaMigrator(CqlSession session, String keyspace, List<Migration> migrations) {
    this.session = session;
    this.keyspace = keyspace;
    this.migrations = migrations;
  }

  /** The newest version Fieldline knows. */
  public static int latestVersion() {
    return Migrations.ALL.get(Migrations.ALL.size() - 1).version();
  }

  /**
   * Creates the keyspace if missing and applies every missing migration.
   *
   * @param replication CQL replication map for a new keyspace
   * @param deadLetterTtlSeconds default TTL of the dead-letter table when it is created
   * @return the versions applied by this call, oldest first
   */
  public List<Integer> migrate(String replication, long deadLetterTtlSeconds) {
    return migrate(replication, deadLetterTtlSeconds, Map.of());
  }

  /**
   * Like {@link #migrate(String, long)}, with data steps: {@code dataSteps.get(v)} runs after the
   * statements of version {@code v} and before {@code v} is recorded, so a step that fails (or a
   * process killed during it) leaves the version unrecorded and the next start runs both again.
   * Steps must therefore be idempotent.
   */
  public List<Integer> migrate(
      String replication, long deadLetterTtlSeconds, Map<Integer, Runnable> dataSteps) {
    ddl(
        String.format(
            Locale.ROOT,
            "CREATE KEYSPACE IF NOT EXISTS %s WITH replication = %s",
            keyspace,
            replication));
    ddl(
        String.format(
            Locale.ROOT,
            "CREATE TABLE IF NOT EXISTS %s.schema_version ("
                + " version int PRIMARY KEY, description text, applied_at timestamp)",
            keyspace));
    Set<Integer> applied = appliedVersions();
    List<Integer> now = new ArrayList<>();
    for (Migration migration : migrations) {
      if (applied.contains(migration.version())) {
        continue;
      }
      LOG.info(
          "[cql] applying schema version {} to {}: {}",
          migration.version(),
          keyspace,
          migration.description());
      for (String statement : migration.statements()) {
        ddl(String.format(Locale.ROOT, statement, keyspace, deadLetterTtlSeconds));
      }
      Runnable dataStep = dataSteps.get(migration.version());
      if (dataStep != null) {
        dataStep.run();
      }
      session.execute(
          SimpleStatement.newInstance(
                  "INSERT INTO "
                      + keyspace
                      + ".schema_version (version, description, applied_at)"
                      + " VALUES (?, ?, ?)",
                  migration.version(),
                  migration.description(),
                  Instant.now())
              .setIdempotent(true));
      now.add(migration.version());
    }
    return now;
  }

  /** The versions recorded in {@code schema_version}. */
  public Set<Integer> appliedVersions() {
    ResultSet rows =
        session.execute(
            SimpleStatement.newInstance("SELECT version FROM " + keyspace + ".schema_version"));
    Set<Integer> versions = new HashSet<>();
    for (Row row : rows) {
      versions.add(row.getInt(0));
    }
    return versions;
  }

  private void ddl(String cql) {
    ResultSet result =
        session.execute(
            SimpleStatement.newInstance(cql).setTimeout(DDL_TIMEOUT).setIdempotent(true));
    if (!result.getExecutionInfo().isSchemaInAgreement()) {
      LOG.warn("[cql] schema not in agreement after: {}", cql);
    }
  }
}
