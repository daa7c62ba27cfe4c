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
 * Which package each device is assigned as its firmware: {@code device_firmware} (the truth, one
 * row per device) and {@code ota_package_devices} (the devices of each package, a claim written
 * before the device's row and removed after it, so that a package in use is never missed; a claim
 * its device's row does not confirm is stale and is removed when met).
 *
 * <p>Thread-safe; stages complete on driver I/O threads and fail with driver exceptions.
 */
final class DeviceFirmware {

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final ConsistencyLevel consistency;
  private final PreparedStatement select;
  private final PreparedStatement insert;
  private final PreparedStatement delete;
  private final PreparedStatement claim;
  private final PreparedStatement unclaim;
  private final PreparedStatement claims;

  /** Prepares the statements; blocks. */
  DeviceFirmware(
      CqlSession session, String keyspace, WriteLimiter limiter, ConsistencyLevel consistency) {
    this.session = session;
    this.limiter = limiter;
    this.consistency = consistency;
    String rows = keyspace + ".device_firmware";
    String index = keyspace + ".ota_package_devices";
    select = session.prepare("SELECT package_id FROM " + rows + " WHERE device_id = ?");
    insert =
        session.prepare(
            "INSERT INTO " + rows + " (device_id, package_id, assigned_time) VALUES (?, ?, ?)");
    delete = session.prepare("DELETE FROM " + rows + " WHERE device_id = ?");
    claim = session.prepare("INSERT INTO " + index + " (package_id, device_id) VALUES (?, ?)");
    unclaim = session.prepare("DELETE FROM " + index + " WHERE package_id = ? AND device_id = ?");
    claims = session.prepare("SELECT device_id FROM " + index + " WHERE package_id = ?");
  }

  /** The package the device is assigned, if any. */
  CompletionStage<Optional<UUID>> of(UUID device) {
    return session
        .executeAsync(select.bind(device).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(row -> row.getUuid(0)));
  }

  /** Claims the package for the device (first step of an assignment). */
  CompletionStage<Void> claim(UUID packageId, UUID device) {
    return write(claim.bind(packageId, device).setIdempotent(true));
  }

  CompletionStage<Void> unclaim(UUID packageId, UUID device) {
    return write(unclaim.bind(packageId, device).setIdempotent(true));
  }

  /** Makes the device's row name the package (second step of an assignment). */
  CompletionStage<Void> set(UUID device, UUID packageId) {
    return write(insert.bind(device, packageId, System.currentTimeMillis()).setIdempotent(true));
  }

  CompletionStage<Void> remove(UUID device) {
    return write(delete.bind(device).setIdempotent(true));
  }

  /**
   * Up to {@code limit} devices whose row names the package, checking the package's claims one at a
   * time and removing the stale ones met on the way.
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
    UUID device = claimed.get(next);
    return of(device)
        .thenCompose(
            assigned -> {
              if (assigned.isPresent() && assigned.get().equals(packageId)) {
                out.add(device);
                return CompletableFuture.<Void>completedFuture(null);
              }
              return unclaim(packageId, device);
            })
        .thenCompose(done -> confirm(packageId, claimed, next + 1, limit, out));
  }

  private CompletionStage<Void> write(Statement<?> statement) {
    Statement<?> ready = statement.setConsistencyLevel(consistency);
    return limiter.<AsyncResultSet>submit(() -> session.executeAsync(ready)).thenApply(rs -> null);
  }
}
