package io.fieldline.dao.cassandra.feed;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.uuid.Uuids;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNameTakenException;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.common.feed.SinkStore;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Sinks in Cassandra: {@code sinks} (one row each; the table is read whole, there are few), {@code
 * sink_names} (a name claimed with a lightweight transaction, so two sinks never share one), {@code
 * sink_status} (one row per sink and node) and {@code sink_dead_letters} (newest first, expiring
 * with the dead-letter TTL).
 */
public final class CassandraSinkStore implements SinkStore {

  private final CqlSession session;
  private final ConsistencyLevel consistency;
  private final PreparedStatement selectAll;
  private final PreparedStatement selectOne;
  private final PreparedStatement upsert;
  private final PreparedStatement delete;
  private final PreparedStatement claimName;
  private final PreparedStatement selectName;
  private final PreparedStatement releaseName;
  private final PreparedStatement saveStatus;
  private final PreparedStatement selectStatuses;
  private final PreparedStatement deleteStatuses;
  private final PreparedStatement addDeadLetter;
  private final PreparedStatement selectDeadLetters;
  private final PreparedStatement deleteDeadLetters;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraSinkStore(CqlSession session, String keyspace, ConsistencyLevel consistency) {
    this.session = session;
    this.consistency = consistency;
    String columns =
        "id, name, type, filter, configuration, paused, created_time, updated_time, replay_from,"
            + " generation";
    this.selectAll = session.prepare("SELECT " + columns + " FROM " + keyspace + ".sinks");
    this.selectOne =
        session.prepare("SELECT " + columns + " FROM " + keyspace + ".sinks WHERE id = ?");
    this.upsert =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".sinks ("
                + columns
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    this.delete = session.prepare("DELETE FROM " + keyspace + ".sinks WHERE id = ?");
    this.claimName =
        session.prepare(
            "INSERT INTO " + keyspace + ".sink_names (name, sink_id) VALUES (?, ?) IF NOT EXISTS");
    this.selectName =
        session.prepare("SELECT sink_id FROM " + keyspace + ".sink_names WHERE name = ?");
    this.releaseName =
        session.prepare("DELETE FROM " + keyspace + ".sink_names WHERE name = ? IF sink_id = ?");
    this.saveStatus =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".sink_status (sink_id, node, state, delivered, lag_records, oldest_at,"
                + " last_error, last_error_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    this.selectStatuses =
        session.prepare(
            "SELECT node, state, delivered, lag_records, oldest_at, last_error, last_error_at,"
                + " updated_at FROM "
                + keyspace
                + ".sink_status WHERE sink_id = ?");
    this.deleteStatuses =
        session.prepare("DELETE FROM " + keyspace + ".sink_status WHERE sink_id = ?");
    this.addDeadLetter =
        session.prepare(
            "INSERT INTO "
                + keyspace
                + ".sink_dead_letters (sink_id, id, created_time, records, status, error, body)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?)");
    this.selectDeadLetters =
        session.prepare(
            "SELECT id, created_time, records, status, error, body FROM "
                + keyspace
                + ".sink_dead_letters WHERE sink_id = ? LIMIT ?");
    this.deleteDeadLetters =
        session.prepare("DELETE FROM " + keyspace + ".sink_dead_letters WHERE sink_id = ?");
  }

  @Override
  public CompletionStage<List<SinkDefinition>> sinks() {
    return StoreErrors.translated(
        AsyncRows.collect(run(selectAll.bind()), CassandraSinkStore::sink, Integer.MAX_VALUE));
  }

  @Override
  public CompletionStage<Optional<SinkDefinition>> sink(UUID id) {
    return StoreErrors.translated(
        run(selectOne.bind(id))
            .thenApply(rs -> Optional.ofNullable(rs.one()).map(CassandraSinkStore::sink)));
  }

  private static SinkDefinition sink(Row row) {
    return new SinkDefinition(
        Objects.requireNonNull(row.getUuid("id")),
        Objects.requireNonNullElse(row.getString("name"), ""),
        Objects.requireNonNullElse(row.getString("type"), ""),
        Objects.requireNonNullElse(row.getString("filter"), "{}"),
        Objects.requireNonNullElse(row.getString("configuration"), "{}"),
        row.getBoolean("paused"),
        row.getLong("created_time"),
        row.getLong("updated_time"),
        row.getLong("replay_from"),
        row.getInt("generation"));
  }

  @Override
  public CompletionStage<Void> save(SinkDefinition sink) {
    CompletionStage<Void> saved =
        sink(sink.id())
            .thenCompose(
                previous ->
                    claim(sink)
                        .thenCompose(
                            ignored ->
                                run(upsert.bind(
                                        sink.id(),
                                        sink.name(),
                                        sink.type(),
                                        sink.filterJson(),
                                        sink.configurationJson(),
                                        sink.paused(),
                                        sink.createdTime(),
                                        sink.updatedTime(),
                                        sink.replayFrom(),
                                        sink.generation()))
                                    .thenCompose(
                                        rs ->
                                            previous.isPresent()
                                                    && !previous.get().name().equals(sink.name())
                                                ? release(previous.get())
                                                : CompletableFuture.completedFuture(null))));
    // A taken name is the caller's error (SinkStore.save: 400 over REST), not a storage failure.
    CompletableFuture<Void> result = new CompletableFuture<>();
    saved.whenComplete(
        (ok, error) -> {
          if (error == null) {
            result.complete(null);
          } else {
            Throwable cause = error instanceof CompletionException ? error.getCause() : error;
            result.completeExceptionally(
                cause instanceof SinkNameTakenException ? cause : StoreErrors.translate(error));
          }
        });
    return result;
  }

  // Claims the sink's name, or finds it already its own.
  private CompletionStage<Void> claim(SinkDefinition sink) {
    return session
        .executeAsync(claimName.bind(sink.name(), sink.id()))
        .thenCompose(
            rs -> {
              if (rs.wasApplied()) {
                return CompletableFuture.completedFuture(null);
              }
              return run(selectName.bind(sink.name()))
                  .thenApply(
                      owner -> {
                        Row row = owner.one();
                        if (row == null || !sink.id().equals(row.getUuid("sink_id"))) {
                          throw new SinkNameTakenException(sink.name());
                        }
                        return null;
                      });
            });
  }

  private CompletionStage<Void> release(SinkDefinition sink) {
    return session.executeAsync(releaseName.bind(sink.name(), sink.id())).thenApply(rs -> null);
  }

  @Override
  public CompletionStage<Boolean> delete(UUID id) {
    CompletionStage<Boolean> deleted =
        sink(id)
            .thenCompose(
                found -> {
                  if (found.isEmpty()) {
                    return CompletableFuture.completedFuture(false);
                  }
                  return run(delete.bind(id))
                      .thenCompose(rs -> run(deleteStatuses.bind(id)))
                      .thenCompose(rs -> run(deleteDeadLetters.bind(id)))
                      .thenCompose(rs -> release(found.get()))
                      .thenApply(done -> true);
                });
    return StoreErrors.translated(deleted);
  }

  @Override
  public CompletionStage<Void> saveStatus(SinkNodeStatus s) {
    return StoreErrors.translated(
        run(saveStatus.bind(
                s.sinkId(),
                s.node(),
                s.state(),
                s.delivered(),
                s.lagRecords(),
                s.oldestUndeliveredAt(),
                s.lastError(),
                s.lastErrorAt(),
                s.updatedAt()))
            .thenApply(rs -> null));
  }

  @Override
  public CompletionStage<List<SinkNodeStatus>> statuses(UUID sinkId) {
    return StoreErrors.translated(
        AsyncRows.collect(
            run(selectStatuses.bind(sinkId)),
            row ->
                new SinkNodeStatus(
                    sinkId,
                    Objects.requireNonNullElse(row.getString("node"), ""),
                    Objects.requireNonNullElse(row.getString("state"), ""),
                    row.getLong("delivered"),
                    row.getLong("lag_records"),
                    row.getLong("oldest_at"),
                    row.getString("last_error"),
                    row.getLong("last_error_at"),
                    row.getLong("updated_at")),
            Integer.MAX_VALUE));
  }

  @Override
  public CompletionStage<Void> deleteStatuses(UUID sinkId) {
    return StoreErrors.translated(run(deleteStatuses.bind(sinkId)).thenApply(rs -> null));
  }

  @Override
  public CompletionStage<Void> addDeadLetter(SinkDeadLetter l) {
    return StoreErrors.translated(
        run(addDeadLetter.bind(
                l.sinkId(),
                l.id().version() == 1 ? l.id() : Uuids.timeBased(),
                l.createdTime(),
                l.records(),
                l.status(),
                l.error(),
                l.body()))
            .thenApply(rs -> null));
  }

  @Override
  public CompletionStage<List<SinkDeadLetter>> deadLetters(UUID sinkId, int limit) {
    return StoreErrors.translated(
        AsyncRows.collect(
            run(selectDeadLetters.bind(sinkId, limit)),
            row ->
                new SinkDeadLetter(
                    sinkId,
                    Objects.requireNonNull(row.getUuid("id")),
                    row.getLong("created_time"),
                    row.getInt("records"),
                    row.getInt("status"),
                    Objects.requireNonNullElse(row.getString("error"), ""),
                    Objects.requireNonNullElse(row.getString("body"), "")),
            limit));
  }

  private CompletionStage<AsyncResultSet> run(Statement<?> statement) {
    return session.executeAsync(statement.setConsistencyLevel(consistency));
  }
}
