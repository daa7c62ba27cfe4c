package io.fieldline.dao.cassandra.ota;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Which package each owner is assigned as its firmware, for one kind of owner: devices ({@code
 * device_firmware}, the truth, one row per device, and {@code ota_package_devices}, the devices of
 * each package) or device profiles ({@code profile_firmware} and {@code ota_package_profiles}). The
 * claim in the package's list is written before the owner's row and removed after it, so that a
 * package in use is never missed; a claim its owner's row does not confirm is stale and is removed
 * when met.
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with driver exceptions.
 */
final class Assignments {

  /** Devices' own firmware. */
  static Assignments ofDevices(
      CqlSession session, String keyspace, WriteLimiter limiter, ConsistencyLevel consistency) {
    return new Assignments(
        session,
        limiter,
        consistency,
        keyspace + ".device_firmware",
        keyspace + ".ota_package_devices",
        "device_id");
  }

  /** Device profiles' firmware. */
  static Assignments ofProfiles(
      CqlSession session, String keyspace, WriteLimiter limiter, ConsistencyLevel consistency) {
    return new Assignments(
        session,
        limiter,
        consistency,
        keyspace + ".profile_firmware",
        keyspace + ".ota_package_profiles",
        "profile_id");
  }

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final ConsistencyLevel consistency;
  private final PreparedStatement select;
  private final PreparedStatement insert;
  private final PreparedStatement delete;
  private final PreparedStatement claim;
  private final PreparedStatement unclaimAll;
  private final PreparedStatement claims;

  /**
   * Prepares the statements; blocks.
   *
   * @param rows the owners' rows ({@code owner PRIMARY KEY, package_id, assigned_time})
   * @param index the claims ({@code (package_id), owner})
   * @param owner the owner's column in both
   */
  private Assignments(
      CqlSession session,
      WriteLimiter limiter,
      ConsistencyLevel consistency,
      String rows,
      String index,
      String owner) {
    this.session = session;
    this.limiter = limiter;
    this.consistency = consistency;
    select = session.prepare("SELECT package_id FROM " + rows + " WHERE " + owner + " = ?");
    insert =
        session.prepare(
            "INSERT INTO " + rows + " (" + owner + ", package_id, assigned_time) VALUES (?, ?, ?)");
    delete = session.prepare("DELETE FROM " + rows + " WHERE " + owner + " = ?");
    claim = session.prepare("INSERT INTO " + index + " (package_id, " + owner + ") VALUES (?, ?)");
    unclaimAll = session.prepare("DELETE FROM " + index + " WHERE package_id = ?");
    claims = session.prepare("SELECT " + owner + " FROM " + index + " WHERE package_id = ?");
  }

  /** The package the owner is assigned, if any. */
  CompletionStage<Optional<UUID>> of(UUID owner) {
    return session
        .executeAsync(select.bind(owner).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(row -> row.getUuid(0)));
  }

  /** Claims the package for the owner (first step of an assignment). */
  CompletionStage<Void> claim(UUID packageId, UUID owner) {
    return write(claim.bind(packageId, owner).setIdempotent(true));
  }

  /** Removes every claim on the package (its delete, once its row is gone). */
  CompletionStage<Void> unclaimAll(UUID packageId) {
    return write(unclaimAll.bind(packageId).setIdempotent(true));
  }

  /** Makes the owner's row name the package (second step of an assignment). */
  CompletionStage<Void> set(UUID owner, UUID packageId) {
    return write(insert.bind(owner, packageId, System.currentTimeMillis()).setIdempotent(true));
  }

  CompletionStage<Void> remove(UUID owner) {
    return write(delete.bind(owner).setIdempotent(true));
  }

  /**
   * Up to {@code limit} owners whose row names the package, checking the package's claims one at a
   * time; the claims the owner's row does not confirm are skipped (and left in place).
   */
  CompletionStage<List<UUID>> confirmed(UUID packageId, int limit) {
    return AsyncRows.collect(
            session.executeAsync(claims.bind(packageId).setIdempotent(true)),
            row -> Objects.requireNonNull(row.getUuid(0)),
            Integer.MAX_VALUE)
        .thenCompose(claimed -> confirm(packageId, claimed, 0, limit, new ArrayList<>()));
  }

  private CompletionStage<List<UUID>> confirm(
      UUID packageId, List<UUID> claimed, int next, int limit, List<UUID> out) {
    if (next >= claimed.size() || out.size() >= limit) {
      return CompletableFuture.completedFuture(out);
    }
    UUID owner = claimed.get(next);
    return of(owner)
        .thenCompose(
            assigned -> {
              if (assigned.isPresent() && assigned.get().equals(packageId)) {
                out.add(owner);
              }
              return confirm(packageId, claimed, next + 1, limit, out);
            });
  }

  private CompletionStage<Void> write(Statement<?> statement) {
    Statement<?> ready = statement.setConsistencyLevel(consistency);
    return limiter.<AsyncResultSet>submit(() -> session.executeAsync(ready)).thenApply(rs -> null);
  }
}
