package io.fieldline.dao.cassandra.profile;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * One table of unique values claimed by profiles: {@code device_profile_by_name} (names) or {@code
 * device_profile_by_key} (provision keys). A value is reserved with a lightweight transaction
 * ({@code IF NOT EXISTS}), so two profiles never both get it, and released with one conditioned on
 * its owner, so a release never removes another profile's claim. A claim is not the truth: the
 * owner's {@code device_profiles} row must hold the value (a crash between the steps of a create or
 * an update can leave a claim no row holds). Thread-safe; stages complete on driver I/O threads.
 */
final class ProfileClaims {

  private final CqlSession session;
  private final String valueColumn;
  private final PreparedStatement reserve;
  private final PreparedStatement release;
  private final PreparedStatement owner;

  /** Prepares the statements of {@code table}, keyed by {@code valueColumn}; blocks. */
  ProfileClaims(CqlSession session, String keyspace, String table, String valueColumn) {
    this.session = session;
    this.valueColumn = valueColumn;
    String qualified = keyspace + "." + table;
    reserve =
        session.prepare(
            "INSERT INTO "
                + qualified
                + " ("
                + valueColumn
                + ", profile_id) VALUES (?, ?) IF NOT EXISTS");
    release =
        session.prepare(
            "DELETE FROM " + qualified + " WHERE " + valueColumn + " = ? IF profile_id = ?");
    owner =
        session.prepare("SELECT profile_id FROM " + qualified + " WHERE " + valueColumn + " = ?");
  }

  /**
   * Reserves {@code value} for {@code profileId}.
   *
   * @return the value's owner now: {@code profileId} when reserved (or already its own), another id
   *     when taken
   */
  CompletionStage<UUID> reserve(String value, UUID profileId) {
    return session
        .executeAsync(reserve.bind(value, profileId))
        .thenApply(
            rs ->
                rs.wasApplied()
                    ? profileId
                    // A refused IF NOT EXISTS returns [applied], then the existing row.
                    : Objects.requireNonNull(
                        Objects.requireNonNull(rs.one()).getUuid("profile_id")));
  }

  /** Releases {@code value} if {@code profileId} still claims it. */
  CompletionStage<Void> release(String value, UUID profileId) {
    return session.executeAsync(release.bind(value, profileId)).thenApply(rs -> null);
  }

  /** The profile claiming {@code value}, if any (check its row: the claim may be stale). */
  CompletionStage<Optional<UUID>> owner(String value) {
    return session
        .executeAsync(owner.bind(value).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).map(row -> row.getUuid(0)));
  }

  @Override
  public String toString() {
    return "ProfileClaims[" + valueColumn + "]";
  }
}
