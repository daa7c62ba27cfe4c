package io.fieldline.dao.cassandra.rpc;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.query.PageData;
import io.fieldline.common.rpc.PersistentRpcStore;
import io.fieldline.common.rpc.RpcStatus;
import io.fieldline.common.rpc.StoredRpc;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.rpc.RpcRows.Summary;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The Cassandra {@link PersistentRpcStore}: {@code rpc_requests}, one partition per device (a
 * device's listing and its pending requests are one partition read), and {@code rpc_by_id}, the
 * device of each request id (reads and deletes by id alone). Both expire after {@code rpc-ttl}.
 *
 * <p>Every write of a request row is a lightweight transaction, so statuses move in one order
 * whatever the clocks of the nodes reporting them: {@code save} is {@code IF NOT EXISTS}, {@code
 * transition} is {@code IF status IN (...)} (a late PUBACK cannot move an answered request back to
 * DELIVERED), {@code delete} is {@code IF EXISTS}. A transition rewrites its columns with a fresh
 * TTL (Cassandra cannot carry the rest of the row's); what it wrote can outlive the request by the
 * time between the request's creation and that transition, and reads as no request ({@link
 * RpcRows}).
 *
 * <p>A listing reads the device's partition once for the ids, times and statuses of its requests,
 * filters, sorts and counts them in memory, then reads the page's rows by id ({@code IN}, {@value
 * #IDS_PER_READ} at a time): its cost grows with the device's requests within {@code rpc-ttl},
 * which a fleet keeps in the hundreds; not with the page number.
 *
 * <p>Writes take slots of the shared {@link WriteLimiter}; reads use the driver's default
 * consistency and take none. Thread-safe; stages complete on driver I/O threads and fail with
 * {@link StoreException}, or {@link IllegalArgumentException} for a request id already stored with
 * other content.
 */
public final class CassandraRpcStore implements PersistentRpcStore {

  private static final int IDS_PER_READ = 100;
  private static final Set<RpcStatus> PENDING = EnumSet.of(RpcStatus.QUEUED, RpcStatus.SENT);

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final ConsistencyLevel consistency;
  private final int ttlSeconds;
  private final PreparedStatement insert;
  private final PreparedStatement insertById;
  private final PreparedStatement transition;
  private final PreparedStatement selectDevice;
  private final PreparedStatement selectOne;
  private final PreparedStatement selectSome;
  private final PreparedStatement selectSummaries;
  private final PreparedStatement delete;
  private final PreparedStatement deleteById;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraRpcStore(CqlSession session, CassandraConfig config, WriteLimiter limiter) {
    this.session = session;
    this.limiter = limiter;
    this.consistency = config.writeConsistency();
    this.ttlSeconds = (int) config.rpcTtl().getSeconds();
    String ks = config.keyspace();
    insert =
        session.prepare(
            "INSERT INTO "
                + ks
                + ".rpc_requests ("
                + RpcRows.COLUMNS
                + ") VALUES ("
                + RpcRows.MARKERS
                + ") IF NOT EXISTS USING TTL :ttl");
    insertById =
        session.prepare(
            "INSERT INTO " + ks + ".rpc_by_id (id, device_id) VALUES (?, ?) USING TTL ?");
    // A marker left unset (response, retries) leaves its column as it is.
    transition =
        session.prepare(
            "UPDATE "
                + ks
                + ".rpc_requests USING TTL :ttl SET status = :status, response = :response,"
                + " retries = :retries WHERE device_id = :device_id AND id = :id"
                + " IF status IN :was");
    selectDevice = session.prepare("SELECT device_id FROM " + ks + ".rpc_by_id WHERE id = ?");
    String select =
        "SELECT " + RpcRows.COLUMNS + " FROM " + ks + ".rpc_requests WHERE device_id = ?";
    selectOne = session.prepare(select + " AND id = ?");
    selectSome = session.prepare(select + " AND id IN ?");
    selectSummaries =
        session.prepare(
            "SELECT "
                + RpcRows.SUMMARY_COLUMNS
                + " FROM "
                + ks
                + ".rpc_requests WHERE device_id = ?");
    delete =
        session.prepare(
            "DELETE FROM " + ks + ".rpc_requests WHERE device_id = ? AND id = ? IF EXISTS");
    deleteById = session.prepare("DELETE FROM " + ks + ".rpc_by_id WHERE id = ?");
  }

  /**
   * {@inheritDoc}
   *
   * <p>Saving the same request again (a retry of a save that timed out) succeeds; another request
   * under a stored id fails with {@link IllegalArgumentException}.
   */
  @Override
  public CompletionStage<Void> save(StoredRpc rpc) {
    UUID id = rpc.request().id();
    UUID device = rpc.request().deviceId().value();
    // The id's device first: a request row is never unreachable by its id.
    CompletionStage<AsyncResultSet> written =
        write(insertById.bind(id, device, ttlSeconds).setIdempotent(true))
            .thenCompose(
                done ->
                    write(
                        RpcRows.bind(insert.boundStatementBuilder(), rpc)
                            .setInt("ttl", ttlSeconds)
                            .build()));
    CompletableFuture<Void> result = new CompletableFuture<>();
    StoreErrors.translated(written)
        .whenComplete(
            (rs, error) -> {
              if (error != null) {
                result.completeExceptionally(error);
              } else if (rs.wasApplied() || sameRequest(rs, rpc)) {
                result.complete(null);
              } else {
                result.completeExceptionally(
                    new IllegalArgumentException("RPC request id " + id + " is taken"));
              }
            });
    return result;
  }

  // A refused IF NOT EXISTS answers the stored row: the same request when a save is retried.
  private static boolean sameRequest(AsyncResultSet refused, StoredRpc rpc) {
    Row row = refused.one();
    return row != null
        && RpcRows.read(row)
            .filter(
                stored ->
                    stored.createdTime() == rpc.createdTime()
                        && stored.request().method().equals(rpc.request().method()))
            .isPresent();
  }

  @Override
  public CompletionStage<Boolean> transition(
      DeviceId device,
      UUID id,
      Set<RpcStatus> from,
      RpcStatus status,
      @Nullable String responseJson,
      @Nullable Integer retriesLeft) {
    if (from.isEmpty()) {
      return CompletableFuture.completedFuture(false);
    }
    BoundStatementBuilder update =
        transition
            .boundStatementBuilder()
            .setInt("ttl", ttlSeconds)
            .setString("status", status.name())
            .setUuid("device_id", device.value())
            .setUuid("id", id)
            .setList("was", from.stream().map(Enum::name).toList(), String.class);
    if (responseJson != null) {
      update.setString("response", responseJson);
    }
    if (retriesLeft != null) {
      update.setInt("retries", retriesLeft);
    }
    return StoreErrors.translated(write(update.build()).thenApply(AsyncResultSet::wasApplied));
  }

  @Override
  public CompletionStage<Optional<StoredRpc>> find(UUID id) {
    return StoreErrors.translated(
        deviceOf(id)
            .thenCompose(
                device ->
                    device.isEmpty()
                        ? CompletableFuture.completedFuture(Optional.<StoredRpc>empty())
                        : session
                            .executeAsync(selectOne.bind(device.get(), id))
                            .thenApply(
                                rs -> Optional.ofNullable(rs.one()).flatMap(RpcRows::read))));
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException (synchronously) for a page size below 1 or a negative page
   */
  @Override
  public CompletionStage<PageData<StoredRpc>> list(
      DeviceId device, Optional<RpcStatus> status, int pageSize, int page) {
    if (pageSize < 1 || page < 0) {
      throw new IllegalArgumentException("need pageSize >= 1 and page >= 0");
    }
    return StoreErrors.translated(
        summaries(device, s -> status.isEmpty() || s.status() == status.get())
            .thenCompose(
                all -> {
                  all.sort(Summary.NEWEST_FIRST);
                  long from = (long) page * pageSize;
                  List<Summary> slice =
                      from >= all.size()
                          ? List.of()
                          : all.subList((int) from, (int) Math.min(all.size(), from + pageSize));
                  return rows(device, slice)
                      .thenApply(rows -> PageData.of(rows, all.size(), pageSize, page));
                }));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Reads the summaries of the device's partition, then the full rows of at most {@code limit}.
   */
  @Override
  public CompletionStage<List<StoredRpc>> pending(DeviceId device, int limit) {
    return StoreErrors.translated(
        summaries(device, s -> PENDING.contains(s.status()))
            .thenCompose(
                all -> {
                  all.sort(Summary.OLDEST_FIRST);
                  return rows(device, all.subList(0, Math.min(all.size(), Math.max(0, limit))));
                }));
  }

  /** {@inheritDoc} Reads the summaries of the device's partition. */
  @Override
  public CompletionStage<Integer> countOpen(DeviceId device, long now) {
    return StoreErrors.translated(
        summaries(device, s -> !s.status().isFinal() && s.openUntil() > now).thenApply(List::size));
  }

  @Override
  public CompletionStage<Boolean> delete(UUID id) {
    return StoreErrors.translated(
        deviceOf(id)
            .thenCompose(
                device -> {
                  if (device.isEmpty()) {
                    return CompletableFuture.completedFuture(false);
                  }
                  return write(delete.bind(device.get(), id))
                      .thenCompose(
                          rs ->
                              write(deleteById.bind(id).setIdempotent(true))
                                  .thenApply(done -> rs.wasApplied()));
                }));
  }

  private CompletionStage<Optional<UUID>> deviceOf(UUID id) {
    return session
        .executeAsync(selectDevice.bind(id))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(row -> row.getUuid(0)));
  }

  // The device's requests that pass the filter, unsorted.
  private CompletionStage<List<Summary>> summaries(DeviceId device, Predicate<Summary> filter) {
    List<Summary> out = new ArrayList<>();
    return AsyncRows.forEach(
            session.executeAsync(selectSummaries.bind(device.value())),
            row -> {
              Summary summary = RpcRows.summary(row);
              if (summary != null && filter.test(summary)) {
                out.add(summary);
              }
            })
        .thenApply(done -> out);
  }

  // The rows of the given requests, in their order; those gone since are left out.
  private CompletionStage<List<StoredRpc>> rows(DeviceId device, List<Summary> wanted) {
    Map<UUID, StoredRpc> found = new HashMap<>();
    CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
    for (int from = 0; from < wanted.size(); from += IDS_PER_READ) {
      List<UUID> ids =
          wanted.subList(from, Math.min(wanted.size(), from + IDS_PER_READ)).stream()
              .map(Summary::id)
              .toList();
      chain =
          chain.thenCompose(
              done ->
                  AsyncRows.forEach(
                      session.executeAsync(selectSome.bind(device.value(), ids)),
                      row ->
                          RpcRows.read(row).ifPresent(rpc -> found.put(rpc.request().id(), rpc))));
    }
    return chain.thenApply(
        done ->
            wanted.stream()
                .map(summary -> found.get(summary.id()))
                .filter(Objects::nonNull)
                .toList());
  }

  private CompletionStage<AsyncResultSet> write(Statement<?> statement) {
    Statement<?> ready = statement.setConsistencyLevel(consistency);
    return limiter.submit(() -> session.executeAsync(ready));
  }
}
