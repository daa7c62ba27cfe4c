package io.fieldline.dao.cassandra.ota;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.ota.OtaPackageConflictException;
import io.fieldline.common.ota.OtaPackageData;
import io.fieldline.common.ota.OtaPackageDraft;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.common.ota.OtaPackageInfo;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.cql.AsyncRows;
import io.fieldline.dao.cassandra.cql.StoreErrors;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.ota.OtaRows.DataRef;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The Cassandra {@link OtaPackageStore} (schema version 6): {@code ota_packages} (one row per
 * package), {@code ota_package_titles} (unique title and version, reserved with a lightweight
 * transaction like device names), {@code ota_package_data} (the data in chunks of {@value
 * #DATA_CHUNK_SIZE} bytes, one partition per package, clustered by upload) and the firmware
 * assignments ({@link DeviceFirmware}).
 *
 * <ul>
 *   <li><b>Upload.</b> Each upload writes its chunks under its own id; completing it is a
 *       lightweight transaction on the package row ({@code IF checksum = null}), so the first
 *       upload to complete becomes the data and a package's data never changes afterwards.
 *   <li><b>Delete.</b> The row is marked {@code deleting} ({@code IF EXISTS}), then the package's
 *       confirmed assignments are counted: any → unmarked and refused; none → data partition, row
 *       and title claim removed. An assignment claims the package first and then checks the mark,
 *       so that an assignment and a delete racing never leave a device assigned a deleted package.
 *       A delete that stopped half-way is finished by the next.
 *   <li><b>Reads</b> of data go by the package row's {@code data_id}, {@code chunk_size} and {@code
 *       data_size}: any range is one query over the chunks holding it.
 * </ul>
 *
 * <p>Writes take slots of the shared {@link WriteLimiter}; reads use the driver's default
 * consistency and take none. Thread-safe; stages complete on driver I/O threads and fail with
 * {@link io.fieldline.common.StoreException}, {@link OtaPackageConflictException} or {@link
 * NoSuchElementException} as the port says.
 */
public final class CassandraOtaPackageStore implements OtaPackageStore {

  /** Bytes per stored chunk of new uploads (a row each; kept in the row for reading). */
  public static final int DATA_CHUNK_SIZE = 64 * 1024;

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final ConsistencyLevel consistency;
  private final PackageChunks chunks;
  private final DeviceFirmware firmware;
  private final PreparedStatement insert;
  private final PreparedStatement selectOne;
  private final PreparedStatement selectAll;
  private final PreparedStatement reserveTitle;
  private final PreparedStatement releaseTitle;
  private final PreparedStatement complete;
  private final PreparedStatement markDeleting;
  private final PreparedStatement unmarkDeleting;
  private final PreparedStatement deleteRow;

  /** Prepares the statements; blocks, so call at startup. */
  public CassandraOtaPackageStore(
      CqlSession session, CassandraConfig config, WriteLimiter limiter) {
    this.session = session;
    this.limiter = limiter;
    this.consistency = config.writeConsistency();
    String ks = config.keyspace();
    this.chunks = new PackageChunks(session, ks, limiter, consistency);
    this.firmware = new DeviceFirmware(session, ks, limiter, consistency);
    String table = ks + ".ota_packages";
    insert =
        session.prepare(
            "INSERT INTO "
                + table
                + " (id, created_time, title, version, type, tag, device_profile_id,"
                + " additional_info, deleting) VALUES (?, ?, ?, ?, ?, ?, ?, ?, false)");
    selectOne = session.prepare("SELECT " + OtaRows.COLUMNS + " FROM " + table + " WHERE id = ?");
    selectAll = session.prepare("SELECT " + OtaRows.COLUMNS + " FROM " + table);
    String titles = ks + ".ota_package_titles";
    reserveTitle =
        session.prepare(
            "INSERT INTO "
                + titles
                + " (title, version, package_id) VALUES (?, ?, ?) IF NOT EXISTS");
    releaseTitle =
        session.prepare(
            "DELETE FROM " + titles + " WHERE title = ? AND version = ? IF package_id = ?");
    // created_time > 0 stands for "the row exists": a conditional UPDATE of a missing row whose
    // conditions hold on nulls would create it.
    complete =
        session.prepare(
            "UPDATE "
                + table
                + " SET file_name = ?, content_type = ?, data_size = ?, chunk_size = ?,"
                + " checksum_algorithm = ?, checksum = ?, data_id = ? WHERE id = ?"
                + " IF created_time > 0 AND checksum = null AND deleting = false");
    markDeleting =
        session.prepare("UPDATE " + table + " SET deleting = true WHERE id = ? IF EXISTS");
    unmarkDeleting =
        session.prepare("UPDATE " + table + " SET deleting = false WHERE id = ? IF EXISTS");
    deleteRow = session.prepare("DELETE FROM " + table + " WHERE id = ?");
  }

  @Override
  public int dataChunkSize() {
    return DATA_CHUNK_SIZE;
  }

  @Override
  public CompletionStage<OtaPackageInfo> create(OtaPackageDraft draft) {
    OtaPackageInfo created =
        new OtaPackageInfo(
            OtaPackageId.random(),
            System.currentTimeMillis(),
            draft.title(),
            draft.version(),
            draft.type(),
            draft.tag(),
            draft.deviceProfileId(),
            draft.additionalInfoJson(),
            null);
    UUID id = created.id().value();
    return translated(
            write(reserveTitle.bind(draft.title(), draft.version(), id))
                .thenCompose(
                    claimed -> {
                      boolean applied = claimed.wasApplied();
                      Row owner = claimed.one();
                      if (!applied && (owner == null || !id.equals(owner.getUuid("package_id")))) {
                        throw new OtaPackageConflictException(
                            "an OTA package titled '"
                                + draft.title()
                                + "' with version '"
                                + draft.version()
                                + "' already exists");
                      }
                      return write(
                          insert
                              .bind(
                                  id,
                                  created.createdTime(),
                                  created.title(),
                                  created.version(),
                                  created.type().name(),
                                  created.tag(),
                                  created.deviceProfileId(),
                                  created.additionalInfoJson())
                              .setIdempotent(true));
                    }))
        .thenApply(done -> created);
  }

  @Override
  public CompletionStage<Optional<OtaPackageInfo>> find(OtaPackageId id) {
    return translated(row(id.value()).thenApply(row -> row.flatMap(OtaRows::read)));
  }

  @Override
  public CompletionStage<List<OtaPackageInfo>> all() {
    return translated(
            AsyncRows.collect(
                session.executeAsync(selectAll.bind().setIdempotent(true)),
                OtaRows::read,
                Integer.MAX_VALUE))
        .thenApply(rows -> rows.stream().flatMap(Optional::stream).toList());
  }

  @Override
  public CompletionStage<Void> writeChunk(OtaPackageId id, UUID uploadId, int index, byte[] bytes) {
    return translated(chunks.write(id.value(), uploadId, index, bytes));
  }

  @Override
  public CompletionStage<OtaPackageInfo> completeUpload(
      OtaPackageId id, UUID uploadId, OtaPackageData data) {
    Statement<?> update =
        complete.bind(
            data.fileName(),
            data.contentType(),
            data.size(),
            DATA_CHUNK_SIZE,
            data.checksumAlgorithm().name(),
            data.checksum(),
            uploadId,
            id.value());
    return translated(
        write(update)
            .thenCompose(
                rs -> {
                  if (rs.wasApplied()) {
                    return find(id)
                        .thenApply(
                            found -> found.orElseThrow(() -> new NoSuchElementException(gone(id))));
                  }
                  Row now = rs.one();
                  if (now == null
                      || !now.getColumnDefinitions().contains("created_time")
                      || now.isNull("created_time")) {
                    throw new NoSuchElementException(gone(id));
                  }
                  throw new OtaPackageConflictException(
                      now.isNull("checksum")
                          ? "OTA package " + id + " is being deleted"
                          : "OTA package " + id + " already has data: it cannot be changed");
                }));
  }

  @Override
  public CompletionStage<Void> abortUpload(OtaPackageId id, UUID uploadId) {
    return translated(chunks.deleteUpload(id.value(), uploadId));
  }

  @Override
  public CompletionStage<byte[]> readData(OtaPackageId id, long offset, int length) {
    if (offset < 0 || length < 1 || length > DATA_CHUNK_SIZE) {
      throw new IllegalArgumentException(
          "need offset >= 0 and length in 1.."
              + DATA_CHUNK_SIZE
              + ", got "
              + offset
              + ", "
              + length);
    }
    return translated(
        row(id.value())
            .thenCompose(
                row -> {
                  DataRef data = row.map(OtaRows::dataRef).orElse(null);
                  return data == null
                      ? CompletableFuture.completedFuture(new byte[0])
                      : chunks.read(id.value(), data, offset, length);
                }));
  }

  @Override
  public CompletionStage<Boolean> delete(OtaPackageId id) {
    UUID packageId = id.value();
    return translated(
        write(markDeleting.bind(packageId))
            .thenCompose(
                marked -> {
                  if (!marked.wasApplied()) {
                    return CompletableFuture.completedFuture(false);
                  }
                  return firmware
                      .confirmed(packageId, 1)
                      .thenCompose(
                          devices ->
                              devices.isEmpty()
                                  ? remove(packageId)
                                  : refuseDelete(id, devices.get(0)));
                }));
  }

  private CompletionStage<Boolean> refuseDelete(OtaPackageId id, UUID device) {
    return write(unmarkDeleting.bind(id.value()))
        .thenApply(
            unmarked -> {
              throw new OtaPackageConflictException(
                  "OTA package "
                      + id
                      + " is assigned to devices (device "
                      + device
                      + " among them): it cannot be deleted");
            });
  }

  // Data, then the row, then the title claim: a delete interrupted on the way leaves a row marked
  // deleting, which the next delete finishes.
  private CompletionStage<Boolean> remove(UUID packageId) {
    return row(packageId)
        .thenCompose(
            row ->
                chunks
                    .deleteAll(packageId)
                    .thenCompose(done -> write(deleteRow.bind(packageId).setIdempotent(true)))
                    .thenCompose(
                        done -> {
                          Optional<OtaPackageInfo> info = row.flatMap(OtaRows::read);
                          return info.isEmpty()
                              ? CompletableFuture.<AsyncResultSet>completedFuture(null)
                              : write(
                                  releaseTitle.bind(
                                      info.get().title(), info.get().version(), packageId));
                        }))
        .thenApply(done -> true);
  }

  @Override
  public CompletionStage<List<DeviceId>> assignedDevices(OtaPackageId id, int limit) {
    return translated(
        firmware
            .confirmed(id.value(), limit)
            .thenApply(devices -> devices.stream().map(DeviceId::new).toList()));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> assign(DeviceId device, OtaPackageId id) {
    UUID packageId = id.value();
    UUID deviceId = device.value();
    return translated(
        firmware
            .claim(packageId, deviceId)
            .thenCompose(claimed -> row(packageId))
            .thenCompose(
                row -> {
                  if (row.isEmpty() || OtaRows.deleting(row.get())) {
                    return firmware
                        .unclaim(packageId, deviceId)
                        .thenApply(
                            undone -> {
                              throw new OtaPackageConflictException(
                                  row.isEmpty()
                                      ? gone(id)
                                      : "OTA package " + id + " is being deleted");
                            });
                  }
                  return firmware.of(deviceId);
                })
            .thenCompose(
                before ->
                    firmware
                        .set(deviceId, packageId)
                        .thenCompose(done -> unclaimOld(before, packageId, deviceId))
                        .thenApply(done -> before.map(OtaPackageId::new))));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> unassign(DeviceId device) {
    UUID deviceId = device.value();
    return translated(
        firmware
            .of(deviceId)
            .thenCompose(
                before ->
                    before.isEmpty()
                        ? CompletableFuture.completedFuture(Optional.<OtaPackageId>empty())
                        : firmware
                            .remove(deviceId)
                            .thenCompose(done -> firmware.unclaim(before.get(), deviceId))
                            .thenApply(done -> before.map(OtaPackageId::new))));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> assignment(DeviceId device) {
    return translated(firmware.of(device.value()).thenApply(found -> found.map(OtaPackageId::new)));
  }

  @Override
  public CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device) {
    return translated(
        firmware
            .of(device.value())
            .thenCompose(
                assigned ->
                    assigned.isEmpty()
                        ? CompletableFuture.completedFuture(Optional.<OtaPackageInfo>empty())
                        : find(new OtaPackageId(assigned.get()))));
  }

  private CompletionStage<Void> unclaimOld(Optional<UUID> before, UUID now, UUID device) {
    return before.isEmpty() || before.get().equals(now)
        ? CompletableFuture.completedFuture(null)
        : firmware.unclaim(before.get(), device);
  }

  private CompletionStage<Optional<Row>> row(UUID id) {
    return session
        .executeAsync(selectOne.bind(id).setIdempotent(true))
        .thenApply(rs -> Optional.ofNullable(rs.one()));
  }

  private CompletionStage<AsyncResultSet> write(Statement<?> statement) {
    Statement<?> ready = statement.setConsistencyLevel(consistency);
    return limiter.submit(() -> session.executeAsync(ready));
  }

  // Driver failures become StoreException; the port's own refusals pass unchanged.
  private static <T> CompletionStage<T> translated(CompletionStage<T> stage) {
    CompletableFuture<T> result = new CompletableFuture<>();
    stage.whenComplete(
        (value, error) -> {
          if (error == null) {
            result.complete(value);
            return;
          }
          Throwable cause = error instanceof CompletionException ? error.getCause() : error;
          result.completeExceptionally(
              cause instanceof OtaPackageConflictException
                      || cause instanceof NoSuchElementException
                      || cause instanceof IllegalArgumentException
                  ? cause
                  : StoreErrors.translate(error));
        });
    return result;
  }

  private static String gone(OtaPackageId id) {
    return "OTA package " + id + " does not exist";
  }
}
