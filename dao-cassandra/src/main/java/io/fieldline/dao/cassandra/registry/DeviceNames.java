package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * {@code device_by_name}: a device name to the device holding it, one row per name, all in one
 * partition (bucket 0). Like the credential indexes ({@link CredentialIndex}), a name is reserved
 * with a lightweight transaction ({@code IF NOT EXISTS}) and released with one conditioned on its
 * owner; a row is a claim, not the truth: the owner's {@code devices} row says which name it has.
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceNames {

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
