package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code device_by_name}: a device name to the device holding it, one row per name, all in one
 * partition (bucket 0). Like the credential indexes ({@link CredentialIndex}), a name is reserved
 * with a lightweight transaction ({@code IF NOT EXISTS}) and released with one conditioned on its
 * owner; a row is a claim, not the truth: the owner's {@code devices} row says which name it has.
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceNames {

  /** Conditional batches {@link #reserveAll} tries before reserving what is left one by one. */
  static final int BATCH_ROUNDS = 3;

  private final CqlSession session;
  private final PreparedStatement reserve;
  private final PreparedStatement release;
  private final PreparedStatement lookup;

  /** Prepares the statements; blocks. */
  DeviceNames(CqlSession session, String keyspace) {
    this.session = session;
    String table = keyspace + ".device_by_name";
    reserve =
        session.prepare(
            "INSERT INTO " + table + " (bucket, name, device_id) VALUES (0, ?, ?) IF NOT EXISTS");
    release =
        session.prepare("DELETE FROM " + table + " WHERE bucket = 0 AND name = ? IF device_id = ?");
    lookup = session.prepare("SELECT device_id FROM " + table + " WHERE bucket = 0 AND name = ?");
  }

  /**
   * Reserves {@code name} for {@code deviceId}.
   *
   * @return the name's owner now: {@code deviceId} when reserved (or already its own), another id
   *     when taken
   */
  CompletionStage<UUID> reserve(String name, UUID deviceId) {
    return session
        .executeAsync(reserve.bind(name, deviceId))
        .thenApply(
            rs ->
                rs.wasApplied()
                    ? deviceId
                    : Objects.requireNonNull(
                        Objects.requireNonNull(rs.one()).getUuid("device_id")));
  }

  /**
   * Reserves each name for its id, all in one lightweight transaction: a conditional batch, which
   * Cassandra accepts because every name is in the one partition, and decides in one Paxos round
   * instead of one per name. A batch applies all of its names or none: when some are taken it is
   * not applied and answers the rows that exist, whose names are then left out of the next batch
   * (at most {@value #BATCH_ROUNDS} batches; what is left after that, while racing creators keep
   * taking names, is reserved one name after the other, as {@link #reserve} does).
   *
   * @param wanted name → the id to reserve it for
   * @return each name's owner now, as {@link #reserve} answers it
   */
  CompletionStage<Map<String, UUID>> reserveAll(Map<String, UUID> wanted) {
    return reserveAll(new LinkedHashMap<>(wanted), new ConcurrentHashMap<>(), 1);
  }

  private CompletionStage<Map<String, UUID>> reserveAll(
      Map<String, UUID> left, Map<String, UUID> owners, int round) {
    if (left.isEmpty()) {
      return CompletableFuture.completedFuture(owners);
    }
    if (left.size() == 1 || round > BATCH_ROUNDS) {
      // One after the other: many transactions at once on the partition contend.
      CompletionStage<?> chain = CompletableFuture.completedFuture(null);
      for (Map.Entry<String, UUID> wanted : left.entrySet()) {
        chain =
            chain.thenCompose(
                previous ->
                    reserve(wanted.getKey(), wanted.getValue())
                        .thenAccept(owner -> owners.put(wanted.getKey(), owner)));
      }
      return chain.thenApply(done -> owners);
    }
    BatchStatementBuilder batch = BatchStatement.builder(DefaultBatchType.LOGGED);
    left.forEach((name, id) -> batch.addStatement(reserve.bind(name, id)));
    return session
        .executeAsync(batch.build())
        .thenCompose(
            rs -> {
              if (rs.wasApplied()) {
                owners.putAll(left);
                return CompletableFuture.completedFuture(owners);
              }
              Map<String, UUID> rest = new LinkedHashMap<>(left);
              for (Row row : rs.currentPage()) {
                String name = row.getString("name");
                UUID owner = row.getUuid("device_id");
                if (name != null && owner != null && rest.remove(name) != null) {
                  owners.put(name, owner);
                }
              }
              return reserveAll(rest, owners, round + 1);
            });
  }

  /** Releases {@code name} if {@code deviceId} still holds it. */
  CompletionStage<Void> release(String name, UUID deviceId) {
    return session.executeAsync(release.bind(name, deviceId)).thenApply(rs -> null);
  }

  /** The device claiming {@code name}, if any (check its row: the claim may be stale). */
  CompletionStage<Optional<UUID>> owner(String name) {
    return session
        .executeAsync(lookup.bind(name).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(row -> row.getUuid(0)));
  }
}
