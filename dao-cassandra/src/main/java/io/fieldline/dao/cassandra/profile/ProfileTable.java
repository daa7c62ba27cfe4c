package io.fieldline.dao.cassandra.profile;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.profile.DeviceProfile;
import io.fieldline.common.profile.DeviceProfileId;
import io.fieldline.common.profile.ProvisionSecret;
import io.fieldline.common.profile.ProvisionType;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code device_profiles} table: one row per profile, read and written whole by column name,
 * the provision secret as its salt and hash. A row without a name or with a provision type this
 * version does not know is no profile (logged once). An update and the start of a delete are
 * lightweight transactions conditioned on the row as read (name, key, secret hash, not being
 * deleted), so two concurrent updates cannot both win and an update never resurrects a deleted
 * profile. Thread-safe; stages complete on driver I/O threads.
 */
final class ProfileTable {

  /** A row: the profile, and whether a delete is checking it. */
  record ProfileRow(DeviceProfile profile, boolean deleting) {}

  private static final Logger LOG = LoggerFactory.getLogger(ProfileTable.class);

  private static final String COLUMNS =
      "id, name, type, transport_type, provision_type, provision_key, secret_salt, secret_hash,"
          + " description, created_time, deleting";
  private static final String WAS_CONDITIONS =
      " IF name = :was_name AND provision_key = :was_provision_key"
          + " AND secret_hash = :was_secret_hash AND deleting = null";

  private final CqlSession session;
  private final PreparedStatement selectById;
  private final PreparedStatement scanAll;
  private final PreparedStatement insert;
  private final PreparedStatement updateIfUnchanged;
  private final PreparedStatement markDeleting;
  private final PreparedStatement clearDeleting;
  private final PreparedStatement delete;
  private boolean loggedUnreadable;

  /** Prepares the statements; blocks. */
  ProfileTable(CqlSession session, String keyspace) {
    this.session = session;
    String table = keyspace + ".device_profiles";
    selectById = session.prepare("SELECT " + COLUMNS + " FROM " + table + " WHERE id = ?");
    scanAll = session.prepare("SELECT " + COLUMNS + " FROM " + table);
    insert =
        session.prepare(
            "INSERT INTO "
                + table
                + " (id, name, type, transport_type, provision_type, provision_key, secret_salt,"
                + " secret_hash, description, created_time) VALUES (:id, :name, :type,"
                + " :transport_type, :provision_type, :provision_key, :secret_salt, :secret_hash,"
                + " :description, :created_time)");
    updateIfUnchanged =
        session.prepare(
            "UPDATE "
                + table
                + " SET name = :name, type = :type, transport_type = :transport_type,"
                + " provision_type = :provision_type, provision_key = :provision_key,"
                + " secret_salt = :secret_salt, secret_hash = :secret_hash,"
                + " description = :description WHERE id = :id"
                + WAS_CONDITIONS);
    markDeleting =
        session.prepare(
            "UPDATE "
                + table
                + " SET deleting = true WHERE id = ? IF name = ? AND deleting = null");
    // Back to "not being deleted": the cell removed, which the conditions above compare with null.
    clearDeleting = session.prepare("UPDATE " + table + " SET deleting = null WHERE id = ?");
    delete = session.prepare("DELETE FROM " + table + " WHERE id = ?");
  }

  CompletionStage<Optional<ProfileRow>> load(DeviceProfileId id) {
    return session
        .executeAsync(selectById.bind(id.value()).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).flatMap(this::row));
  }

  /** Every profile, at most {@code limit}, in no particular order. */
  CompletionStage<List<ProfileRow>> scan(int limit) {
    return AsyncRows.collect(
            session.executeAsync(scanAll.bind().setPageSize(1000).setIdempotent(true)),
            this::row,
            limit)
        .thenApply(rows -> rows.stream().flatMap(Optional::stream).toList());
  }

  /** Writes a new profile's row (idempotent: the same values every time). */
  CompletionStage<Void> insert(DeviceProfile profile) {
    BoundStatementBuilder builder =
        bindFields(insert.boundStatementBuilder(), profile)
            .setLong("created_time", profile.createdTime())
            .setIdempotence(true);
    return session.executeAsync(builder.build()).thenApply(rs -> null);
  }

  /**
   * Gives the profile of {@code current} the fields of {@code next} if its row is still {@code
   * current} and no delete is checking it.
   *
   * @return whether it was applied
   */
  CompletionStage<Boolean> updateIfUnchanged(DeviceProfile current, DeviceProfile next) {
    ProvisionSecret was = current.secret();
    BoundStatementBuilder builder =
        bindFields(updateIfUnchanged.boundStatementBuilder(), next)
            .setString("was_name", current.name())
            .setString("was_provision_key", current.provisionDeviceKey())
            .setByteBuffer("was_secret_hash", was == null ? null : ByteBuffer.wrap(was.hash()));
    return session.executeAsync(builder.build()).thenApply(rs -> rs.wasApplied());
  }

  /**
   * Marks the profile as being deleted, unless a delete already does. Conditioned on the name as
   * read, which also keeps the statement from creating a row for a profile deleted meanwhile.
   *
   * @return whether it was marked (false: deleted or renamed meanwhile, or another delete runs)
   */
  CompletionStage<Boolean> markDeleting(DeviceProfile current) {
    return session
        .executeAsync(markDeleting.bind(current.id().value(), current.name()))
        .thenApply(rs -> rs.wasApplied());
  }

  CompletionStage<Void> clearDeleting(DeviceProfileId id) {
    return session
        .executeAsync(clearDeleting.bind(id.value()).setIdempotent(true))
        .thenApply(rs -> null);
  }

  CompletionStage<Void> delete(DeviceProfileId id) {
    return session.executeAsync(delete.bind(id.value()).setIdempotent(true)).thenApply(rs -> null);
  }

  private static BoundStatementBuilder bindFields(
      BoundStatementBuilder builder, DeviceProfile profile) {
    ProvisionSecret secret = profile.secret();
    return builder
        .setUuid("id", profile.id().value())
        .setString("name", profile.name())
        .setString("type", profile.type())
        .setString("transport_type", profile.transportType())
        .setString("provision_type", profile.provisionType().name())
        .setString("provision_key", profile.provisionDeviceKey())
        .setByteBuffer("secret_salt", secret == null ? null : ByteBuffer.wrap(secret.salt()))
        .setByteBuffer("secret_hash", secret == null ? null : ByteBuffer.wrap(secret.hash()))
        .setString("description", profile.description());
  }

  private Optional<ProfileRow> row(Row row) {
    UUID id = row.getUuid("id");
    String name = row.getString("name");
    String type = row.getString("type");
    String transportType = row.getString("transport_type");
    String provisionType = row.getString("provision_type");
    if (id == null || name == null || type == null || transportType == null) {
      return Optional.empty();
    }
    try {
      DeviceProfile profile =
          new DeviceProfile(
              new DeviceProfileId(id),
              name,
              type,
              transportType,
              ProvisionType.valueOf(String.valueOf(provisionType)),
              row.getString("provision_key"),
              secret(row.getByteBuffer("secret_salt"), row.getByteBuffer("secret_hash")),
              row.getString("description"),
              false,
              row.getLong("created_time"));
      return Optional.of(new ProfileRow(profile, row.getBoolean("deleting")));
    } catch (IllegalArgumentException unreadable) {
      synchronized (this) {
        if (!loggedUnreadable) {
          loggedUnreadable = true;
          LOG.warn(
              "[profile|{}] its device_profiles row cannot be read ({}): it counts as no profile;"
                  + " logged only this once",
              id,
              unreadable.getMessage());
        }
      }
      return Optional.empty();
    }
  }

  private static @Nullable ProvisionSecret secret(
      @Nullable ByteBuffer salt, @Nullable ByteBuffer hash) {
    if (salt == null || hash == null) {
      return null;
    }
    return ProvisionSecret.stored(bytes(salt), bytes(hash));
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }
}
