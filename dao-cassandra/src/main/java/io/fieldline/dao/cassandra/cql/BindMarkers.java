package io.fieldline.dao.cassandra.cql;

import com.datastax.oss.driver.api.core.CqlIdentifier;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;

/**
 * Finds a prepared statement's bind markers by name, once, when the statement is prepared: writes
 * then set values by those positions, so a statement's text and its binding cannot drift apart, and
 * the write path pays no name lookup per value (the driver's {@code setXxx(String, ...)} searches a
 * multimap on every call). Stateless.
 */
public final class BindMarkers {

  /** The name Cassandra gives the marker of {@code USING TTL ?}. */
  public static final String TTL = "[ttl]";

  /** The name Cassandra gives the marker of {@code USING TIMESTAMP ?}. */
  public static final String TIMESTAMP = "[timestamp]";

  private BindMarkers() {}

  /**
   * The position of the marker named {@code name} (a column name as Cassandra stores it, or {@link
   * #TTL} / {@link #TIMESTAMP}).
   *
   * @throws IllegalStateException if the statement has no such marker: a programming error, found
   *     at startup
   */
  public static int indexOf(PreparedStatement statement, String name) {
    int index = statement.getVariableDefinitions().firstIndexOf(CqlIdentifier.fromInternal(name));
    if (index < 0) {
      throw new IllegalStateException("no bind marker '" + name + "' in: " + statement.getQuery());
    }
    return index;
  }
}
