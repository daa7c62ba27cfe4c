package io.fieldline.dao.cassandra.schema;

import java.util.List;

/**
 * One schema version: idempotent CQL statements ({@code CREATE ... IF NOT EXISTS}, {@code ALTER}
 * guarded by the version table) with {@code %1$s} standing for the keyspace.
 *
 * @param version strictly increasing, starting at 1; never renumbered once released
 * @param description one line, stored in {@code schema_version}
 * @param statements applied in order
 */
public record Migration(int version, String description, List<String> statements) {

  public Migration {
    statements = List.copyOf(statements);
  }
}
