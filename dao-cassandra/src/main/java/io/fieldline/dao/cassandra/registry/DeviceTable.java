package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatementBuilder;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.device.Device;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code devices} table: one row per device with its one credential ({@link
 * CredentialColumns}). Rows are read and written whole, by column name. A row without a name (what
 * a write racing a delete could leave) is no device, and so is a row whose credential cannot be
 * read (a type this version does not know, say one written by a newer version, or columns missing
 * for its type): one such row must not fail the lookups of others or the start-up scan. Those are
 * counted ({@link #unreadableRows}) and the first one is logged.
 *
 * <p>A credential is replaced, a row updated (name, type, label, additional info) and a row
 * deleted, by a lightweight transaction conditioned on the row as it was read (name, token, key and
 * password hash), so a replacement never resurrects a deleted device, two concurrent replacements
 * cannot both win, and a delete never removes a row whose credential changed since it was read.
 * Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceTable {

  /** A row: the device and its credential. */
  record DeviceRow(Device device, CredentialColumns credentials) {}

  private static final Logger LOG = LoggerFactory.getLogger(DeviceTable.class);

  private static final String COLUMNS =
      "id, name, type, created_time, label, additional_info, credentials_type, access_token,"
          + " credentials_key, mqtt_client_id, mqtt_user_name, mqtt_password_hash,"
          + " certificate_pem";
  private static final String MARKERS =
      ":id, :name, :type, :created_time, :label, :additional_info, :credentials_type,"
          + " :access_token, :credentials_key, :mqtt_client_id, :mqtt_user_name,"
          + " :mqtt_password_hash, :certificate_pem";
  // The columns conditions compare with the row as read (see wasConditions).
  private static final String WAS_CONDITIONS =
      " IF name = :was_name AND access_token = :was_access_token"
          + " AND credentials_key = :was_credentials_key"
          + " AND mqtt_password_hash = :was_mqtt_password_hash";
  private static final int SCAN_PAGE = 5_000;

  private final CqlSession session;
  private final PreparedStatement selectById;
  private final PreparedStatement scanAll;
  private final PreparedStatement insertIfAbsent;
  private final PreparedStatement replaceCredentials;
  private final PreparedStatement deleteIfUnchanged;
  private final PreparedStatement updateIfUnchanged;
  private final AtomicLong unreadable = new AtomicLong();

  /** Prepares the statements; blocks. */
  DeviceTable(CqlSession session, String keyspace) {
    this.session = session;
    selectById =
        session.prepare("SELECT " + COLUMNS + " FROM " + keyspace + ".devices WHERE id = ?");
    scanAll = session.prepare("SELECT " + COLUMNS + " FROM " + keyspace + ".devices");
    String insertText =
        "INSERT INTO " + keyspace + ".devices (" + COLUMNS + ") VALUES (" + MARKERS + ")";
    insertIfAbsent = session.prepare(insertText + " IF NOT EXISTS");
    // Conditions compare with the row as read; "= null" holds for a null (or absent) cell.
    replaceCredentials =
        session.prepare(
            "UPDATE "
                + keyspace
                + ".devices SET credentials_type = :credentials_type,"
                + " access_token = :access_token, credentials_key = :credentials_key,"
                + " mqtt_client_id = :mqtt_client_id, mqtt_user_name = :mqtt_user_name,"
                + " mqtt_password_hash = :mqtt_password_hash, certificate_pem = :certificate_pem"
                + " WHERE id = :id"
                + WAS_CONDITIONS);
    deleteIfUnchanged =
        session.prepare("DELETE FROM " + keyspace + ".devices WHERE id = :id" + WAS_CONDITIONS);
    updateIfUnchanged =
        session.prepare(
            "UPDATE "
                + keyspace
                + ".devices SET name = :name, type = :type, label = :label,"
                + " additional_info = :additional_info WHERE id = :id"
                + WAS_CONDITIONS);
  }

  CompletionStage<Optional<DeviceRow>> load(UUID id) {
    return session
        .executeAsync(selectById.bind(id).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()).flatMap(this::row));
  }

  /** Every device, at most {@code limit}, in no particular order. Blocks (start-up only). */
  List<DeviceRow> scan(int limit) {
    List<DeviceRow> rows = new ArrayList<>();
    for (Row row : session.execute(scanAll.bind().setPageSize(SCAN_PAGE))) {
      if (rows.size() >= limit) {
        break;
      }
      row(row).ifPresent(rows::add);
    }
    return rows;
  }

  /**
   * Hands every device to {@code each}, in no particular order, page by page (the next page is
   * fetched once the current one is consumed). {@code each} runs on driver I/O threads, one call at
   * a time.
   */
  CompletionStage<Void> scanAsync(Consumer<Device> each) {
    return AsyncRows.forEach(
        session.executeAsync(scanAll.bind().setPageSize(SCAN_PAGE)),
        row -> row(row).ifPresent(found -> each.accept(found.device())));
  }

  /**
   * Gives the device of {@code current} the name, type, label and additional info of {@code next}
   * if its row is still {@code current}.
   *
   * @return whether it was applied (false: the device was deleted, renamed or its credential
   *     changed since it was read)
   */
  CompletionStage<Boolean> updateIfUnchanged(DeviceRow current, Device next) {
    BoundStatement statement =
        wasConditions(updateIfUnchanged.boundStatementBuilder(), current)
            .setUuid("id", current.device().id().value())
            .setString("name", next.name())
            .setString("type", next.type())
            .setString("label", next.label())
            .setString("additional_info", next.additionalInfoJson())
            .build();
    return session.executeAsync(statement).thenApply(rs -> rs.wasApplied());
  }

  /**
   * Writes the row unless one exists.
   *
   * @return empty if written, else the existing row
   */
  CompletionStage<Optional<DeviceRow>> insertIfAbsent(DeviceRow row) {
    return session
        .executeAsync(bindRow(insertIfAbsent, row).build())
        // A refused IF NOT EXISTS returns [applied] first, then the existing row's columns.
        .thenApply(
            rs -> rs.wasApplied() ? Optional.empty() : row(Objects.requireNonNull(rs.one())));
  }

  /**
   * Gives the device {@code next} if its row is still {@code current}.
   *
   * @return whether it was applied (false: the device was deleted or its credential changed since
   *     it was read)
   */
  CompletionStage<Boolean> replaceCredentials(DeviceRow current, CredentialColumns next) {
    BoundStatement statement =
        wasConditions(bindCredentials(replaceCredentials.boundStatementBuilder(), next), current)
            .setUuid("id", current.device().id().value())
            .build();
    return session.executeAsync(statement).thenApply(rs -> rs.wasApplied());
  }

  // The row as read, for the IF of a replacement or a delete.
  private static BoundStatementBuilder wasConditions(
      BoundStatementBuilder builder, DeviceRow current) {
    CredentialColumns was = current.credentials();
    return builder
        .setString("was_name", current.device().name())
        .setString("was_access_token", was.accessToken())
        .setString("was_credentials_key", was.credentialsKey())
        .setString("was_mqtt_password_hash", was.passwordHash());
  }

  /** How many times a row was read whose credential could not be read (each read counts). */
  long unreadableRows() {
    return unreadable.get();
  }

  /**
   * Deletes the device's row if it is still {@code current}.
   *
   * @return whether it was deleted (false: it was replaced or deleted since it was read)
   */
  CompletionStage<Boolean> deleteIfUnchanged(DeviceRow current) {
    BoundStatement statement =
        wasConditions(deleteIfUnchanged.boundStatementBuilder(), current)
            .setUuid("id", current.device().id().value())
            .build();
    return session.executeAsync(statement).thenApply(rs -> rs.wasApplied());
  }

  // Label and additional info are left unset when null: a new row needs no tombstones.
  private static BoundStatementBuilder bindRow(PreparedStatement statement, DeviceRow row) {
    Device device = row.device();
    BoundStatementBuilder builder =
        bindCredentials(statement.boundStatementBuilder(), row.credentials())
            .setUuid("id", device.id().value())
            .setString("name", device.name())
            .setString("type", device.type())
            .setLong("created_time", device.createdTime());
    if (device.label() != null) {
      builder.setString("label", device.label());
    }
    if (device.additionalInfoJson() != null) {
      builder.setString("additional_info", device.additionalInfoJson());
    }
    return builder;
  }

  // Every credential column is bound, nulls included: a replacement clears the other types'.
  private static BoundStatementBuilder bindCredentials(
      BoundStatementBuilder builder, CredentialColumns credentials) {
    return builder
        .setString("credentials_type", credentials.type().name())
        .setString("access_token", credentials.accessToken())
        .setString("credentials_key", credentials.credentialsKey())
        .setString("mqtt_client_id", credentials.clientId())
        .setString("mqtt_user_name", credentials.userName())
        .setString("mqtt_password_hash", credentials.passwordHash())
        .setString("certificate_pem", credentials.certificatePem());
  }

  private Optional<DeviceRow> row(Row row) {
    String name = row.getString("name");
    String type = row.getString("type");
    UUID id = row.getUuid("id");
    if (name == null || type == null || id == null) {
      return Optional.empty();
    }
    String typeName = row.getString("credentials_type");
    String token = row.getString("access_token");
    CredentialColumns credentials;
    try {
      // Rows written before schema version 3 have no type: they are access tokens.
      CredentialsType credentialsType =
          typeName == null ? CredentialsType.ACCESS_TOKEN : CredentialsType.valueOf(typeName);
      credentials =
          new CredentialColumns(
              credentialsType,
              token,
              row.getString("credentials_key"),
              row.getString("mqtt_client_id"),
              row.getString("mqtt_user_name"),
              row.getString("mqtt_password_hash"),
              row.getString("certificate_pem"));
    } catch (IllegalArgumentException unknownTypeOrIncomplete) {
      if (unreadable.getAndIncrement() == 0) {
        LOG.warn(
            "[device|{}] its devices row cannot be read ({}): it counts as no device; this and"
                + " every other unreadable row read are counted in {}, logged only this once",
            id,
            unknownTypeOrIncomplete.getMessage(),
            StoreMetrics.DEVICES_UNREADABLE);
      }
      return Optional.empty();
    }
    return Optional.of(
        new DeviceRow(
            new Device(
                new DeviceId(id),
                name,
                type,
                token,
                row.getLong("created_time"),
                row.getString("label"),
                row.getString("additional_info")),
            credentials));
  }
}
