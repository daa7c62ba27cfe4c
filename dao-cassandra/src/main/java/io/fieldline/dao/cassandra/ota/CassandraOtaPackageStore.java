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
import io.fieldline.common.profile.DeviceProfileId;
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
 * The Cassandra {@link OtaPackageStore} (schema versions 6 and 7): {@code ota_packages} (one row
 * per package), {@code ota_package_titles} (unique title and version, reserved with a lightweight
 * transaction like device names), {@code ota_package_data} (the data in chunks of {@value
 * #DATA_CHUNK_SIZE} bytes, one partition per package, clustered by upload) and the firmware
 * assignments of devices and of device profiles ({@link Assignments}).
 *
 * <ul>
 *   <li><b>Upload.</b> Each upload writes its chunks under its own id; completing it is a
 *       lightweight transaction on the package row ({@code IF checksum = null}), so the first
 *       upload to complete becomes the data and a package's data never changes afterwards.
 *   <li><b>Delete.</b> The row is marked {@code deleting} ({@code IF EXISTS}), then the package's
 *       confirmed assignments (devices', then profiles') are counted: any → unmarked and refused;
 *       none → data partition, row, the package's claims and title claim removed. Only a delete
 *       removes claims (a claim not confirmed is skipped, never removed: it may be an assignment
 *       between its two writes). An assignment claims the package, checks the mark, writes the
 *       owner's row and checks the mark again, putting the row back and refusing when the package
 *       is now being deleted or gone; so an assignment and a delete racing never leave a device or
 *       a profile assigned a deleted package. A delete that stopped half-way is finished by the
 *       next.
 *   <li><b>A device's firmware</b> ({@link #assignedFirmware}) is its own assignment, else its
 *       profile's: the profile is read from the device's row ({@code devices.device_profile_id},
 *       the profile store's truth).
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
  private final Assignments firmware;
  private final Assignments profileFirmware;
  private final PreparedStatement profileOfDevice;
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
    this.firmware = Assignments.ofDevices(session, ks, limiter, consistency);
    this.profileFirmware = Assignments.ofProfiles(session, ks, limiter, consistency);
    profileOfDevice =
        session.prepare("SELECT name, device_profile_id FROM " + ks + ".devices WHERE id = ?");
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
                          devices -> {
                            if (!devices.isEmpty()) {
                              return refuseDelete(id, "devices (device " + devices.get(0));
                            }
                            return profileFirmware
                                .confirmed(packageId, 1)
                                .thenCompose(
                                    profiles ->
                                        profiles.isEmpty()
                                            ? remove(packageId)
                                            : refuseDelete(
                                                id,
                                                "device profiles (device profile "
                                                    + profiles.get(0)));
                          });
                }));
  }

  private CompletionStage<Boolean> refuseDelete(OtaPackageId id, String owners) {
    return write(unmarkDeleting.bind(id.value()))
        .thenApply(
            unmarked -> {
              throw new OtaPackageConflictException(
                  "OTA package "
                      + id
                      + " is assigned to "
                      + owners
                      + " among them): it cannot be deleted");
            });
  }

  // Data, then the row, then the claims on it (only now: an assignment racing the delete finds the
  // row gone and undoes itself), then the title claim: a delete interrupted before the row is gone
  // leaves a row marked deleting, which the next delete finishes; after, claims that nothing reads.
  private CompletionStage<Boolean> remove(UUID packageId) {
    return row(packageId)
        .thenCompose(
            row ->
                chunks
                    .deleteAll(packageId)
                    .thenCompose(done -> write(deleteRow.bind(packageId).setIdempotent(true)))
                    .thenCompose(done -> firmware.unclaimAll(packageId))
                    .thenCompose(done -> profileFirmware.unclaimAll(packageId))
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
    return translated(assign(firmware, device.value(), id));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> unassign(DeviceId device) {
    return translated(unassign(firmware, device.value()));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> assignment(DeviceId device) {
    return translated(firmware.of(device.value()).thenApply(found -> found.map(OtaPackageId::new)));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> assignToProfile(
      DeviceProfileId profile, OtaPackageId id) {
    return translated(assign(profileFirmware, profile.value(), id));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> unassignProfile(DeviceProfileId profile) {
    return translated(unassign(profileFirmware, profile.value()));
  }

  @Override
  public CompletionStage<Optional<OtaPackageId>> profileAssignment(DeviceProfileId profile) {
    return translated(
        profileFirmware.of(profile.value()).thenApply(found -> found.map(OtaPackageId::new)));
  }

  @Override
  public CompletionStage<List<DeviceProfileId>> assignedProfiles(OtaPackageId id, int limit) {
    return translated(
        profileFirmware
            .confirmed(id.value(), limit)
            .thenApply(profiles -> profiles.stream().map(DeviceProfileId::new).toList()));
  }

  // Claim, check the package (gone or being deleted: refuse), write the owner's row, then check the
  // package again: a delete that marked it since may have read the owner's row before it was
  // written, so the row is put back as it was and the assignment refused. A delete marking it after
  // that second check finds the claim and the row naming the package, and is refused. Claims are
  // never removed here (a stale one is skipped by the delete's check; see Assignments).
  private CompletionStage<Optional<OtaPackageId>> assign(
      Assignments table, UUID owner, OtaPackageId id) {
    UUID packageId = id.value();
    return table
        .claim(packageId, owner)
        .thenCompose(claimed -> row(packageId))
        .thenCompose(
            row -> {
              refuseUnlessAssignable(id, row);
              return table.of(owner);
            })
        .thenCompose(
            before ->
                table
                    .set(owner, packageId)
                    .thenCompose(done -> row(packageId))
                    .thenCompose(
                        row -> {
                          if (row.isPresent() && !OtaRows.deleting(row.get())) {
                            return CompletableFuture.completedFuture(before.map(OtaPackageId::new));
                          }
                          CompletionStage<Void> restored =
                              before.isPresent()
                                  ? table.set(owner, before.get())
                                  : table.remove(owner);
                          return restored.thenApply(
                              done -> {
                                refuseUnlessAssignable(id, row);
                                return before.map(OtaPackageId::new);
                              });
                        }));
  }

  private static void refuseUnlessAssignable(OtaPackageId id, Optional<Row> row) {
    if (row.isEmpty() || OtaRows.deleting(row.get())) {
      throw new OtaPackageConflictException(
          row.isEmpty() ? gone(id) : "OTA package " + id + " is being deleted");
    }
  }

  // The owner's row only: the claim stays, skipped by the package's delete from now on.
  private static CompletionStage<Optional<OtaPackageId>> unassign(Assignments table, UUID owner) {
    return table
        .of(owner)
        .thenCompose(
            before ->
                before.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<OtaPackageId>empty())
                    : table.remove(owner).thenApply(done -> before.map(OtaPackageId::new)));
  }

  /** The device's own firmware, else its profile's (reads of the two run together). */
  @Override
  public CompletionStage<Optional<OtaPackageInfo>> assignedFirmware(DeviceId device) {
    CompletionStage<Optional<UUID>> own = firmware.of(device.value());
    CompletionStage<Optional<UUID>> ofProfile =
        session
            .executeAsync(profileOfDevice.bind(device.value()).setIdempotent(true))
            .thenCompose(
                rs -> {
                  Row row = rs.one();
                  UUID profile =
                      row == null || row.getString("name") == null
                          ? null
                          : row.getUuid("device_profile_id");
                  return profile == null
                      ? CompletableFuture.completedFuture(Optional.<UUID>empty())
                      : profileFirmware.of(profile);
                });
    return translated(
        own.thenCombine(ofProfile, (mine, profiles) -> mine.isPresent() ? mine : profiles)
            .thenCompose(
                assigned ->
                    assigned.isEmpty()
                        ? CompletableFuture.completedFuture(Optional.<OtaPackageInfo>empty())
                        : find(new OtaPackageId(assigned.get()))));
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
