package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * The two credential indexes, {@code device_by_token} and {@code device_by_credentials}: a
 * credential's key to the device holding it, one row per key. A key is reserved with a lightweight
 * transaction ({@code IF NOT EXISTS}), so two devices can never both get it, and released with one
 * conditioned on its owner, so a release never removes another device's reservation. An index row
 * is a claim, not the truth: a lookup must check that the owner's row holds the credential (a crash
 * between the steps of a create or a replacement can leave a claim nobody holds).
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class CredentialIndex {

  private final CqlSession session;
  private final PreparedStatement reserveToken;
  private final PreparedStatement reserveKey;
  private final PreparedStatement releaseToken;
  private final PreparedStatement releaseKey;
  private final PreparedStatement lookupToken;
  private final PreparedStatement lookupKey;

  /** Prepares the statements; blocks. */
  CredentialIndex(CqlSession session, String keyspace) {
    this.session = session;
    String tokens = keyspace + ".device_by_token";
    String keys = keyspace + ".device_by_credentials";
    reserveToken =
        session.prepare(
            "INSERT INTO " + tokens + " (access_token, device_id) VALUES (?, ?) IF NOT EXISTS");
    reserveKey =
        session.prepare(
            "INSERT INTO " + keys + " (credentials_key, device_id) VALUES (?, ?) IF NOT EXISTS");
    releaseToken =
        session.prepare("DELETE FROM " + tokens + " WHERE access_token = ? IF device_id = ?");
    releaseKey =
        session.prepare("DELETE FROM " + keys + " WHERE credentials_key = ? IF device_id = ?");
    lookupToken = session.prepare("SELECT device_id FROM " + tokens + " WHERE access_token = ?");
    lookupKey = session.prepare("SELECT device_id FROM " + keys + " WHERE credentials_key = ?");
  }

  /**
   * Reserves {@code key} for {@code deviceId}.
   *
   * @return the key's owner now: {@code deviceId} when reserved (or already its own), another id
   *     when taken
   */
  CompletionStage<UUID> reserve(CredentialKey key, UUID deviceId) {
    PreparedStatement statement = key.token() ? reserveToken : reserveKey;
    return session
        .executeAsync(statement.bind(key.value(), deviceId))
        .thenApply(
            rs -> {
              if (rs.wasApplied()) {
                return deviceId;
              }
              // A refused IF NOT EXISTS returns [applied], then the existing row.
              return Objects.requireNonNull(Objects.requireNonNull(rs.one()).getUuid("device_id"));
            });
  }

  /** Releases {@code key} if {@code deviceId} owns it. */
  CompletionStage<Void> release(CredentialKey key, UUID deviceId) {
    PreparedStatement statement = key.token() ? releaseToken : releaseKey;
    return session.executeAsync(statement.bind(key.value(), deviceId)).thenApply(rs -> null);
  }

  /** The device that claims {@code key}, if any. */
  CompletionStage<Optional<UUID>> owner(CredentialKey key) {
    PreparedStatement statement = key.token() ? lookupToken : lookupKey;
    return session
        .executeAsync(statement.bind(key.value()).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(CredentialIndex::deviceId));
  }

  private static UUID deviceId(Row row) {
    return Objects.requireNonNull(row.getUuid(0));
  }
}
