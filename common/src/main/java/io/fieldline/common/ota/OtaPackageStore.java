package io.fieldline.common.ota;

import io.fieldline.common.DeviceId;
import io.fieldline.common.profile.DeviceProfileId;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * OTA packages, their data and the devices and device profiles they are assigned to (the REST API's
 * side; a device's download reads through the {@link FirmwareSource} it extends). Every method is
 * asynchronous and never blocks; stages fail with {@link io.fieldline.common.StoreException} when
 * storage cannot answer, with {@link OtaPackageConflictException} when the change contradicts what
 * is stored.
 *
 * <p>Data is uploaded by one caller at a time per upload: it picks a fresh {@code uploadId}, writes
 * the data's chunks of {@link #dataChunkSize()} bytes ({@link #writeChunk}, the last one shorter),
 * then {@link #completeUpload} (or {@link #abortUpload} on failure). Concurrent uploads into one
 * package do not mix: each writes its own chunks, the first to complete wins, the others fail with
 * {@link OtaPackageConflictException} and remove theirs.
 */
public interface OtaPackageStore extends FirmwareSource {

  /** Creates a package without data; fails with a conflict when its title and version are taken. */
  CompletionStage<OtaPackageInfo> create(OtaPackageDraft draft);

  CompletionStage<Optional<OtaPackageInfo>> find(OtaPackageId id);

  /**
   * Every package, in no particular order: packages number in the tens or hundreds, and listing
   * reads them all (sorted, filtered and paged by the caller).
   */
  CompletionStage<List<OtaPackageInfo>> all();

  /** Stores chunk {@code index} (from 0) of upload {@code uploadId} into package {@code id}. */
  CompletionStage<Void> writeChunk(OtaPackageId id, UUID uploadId, int index, byte[] bytes);

  /**
   * Makes upload {@code uploadId}, whose chunks are all written, the package's data.
   *
   * @return the package with its data; fails with {@link OtaPackageConflictException} when the
   *     package already has data or is being deleted, with {@link java.util.NoSuchElementException}
   *     when it no longer exists
   */
  CompletionStage<OtaPackageInfo> completeUpload(
      OtaPackageId id, UUID uploadId, OtaPackageData data);

  /** Removes the chunks of an upload that will not complete. */
  CompletionStage<Void> abortUpload(OtaPackageId id, UUID uploadId);

  /**
   * Deletes a package and its data; completes with false when there was none. Refused with {@link
   * OtaPackageConflictException} while devices or device profiles are assigned to it ({@link
   * #assignedDevices}, {@link #assignedProfiles}), as ThingsBoard refuses it.
   */
  CompletionStage<Boolean> delete(OtaPackageId id);

  /** Up to {@code limit} of the devices assigned to the package, in no particular order. */
  CompletionStage<List<DeviceId>> assignedDevices(OtaPackageId id, int limit);

  /**
   * Assigns package {@code id} to {@code device} as its firmware, replacing what was assigned.
   *
   * @return the package assigned before, if any; fails with {@link OtaPackageConflictException}
   *     when the package is gone or being deleted (nothing is then assigned)
   */
  CompletionStage<Optional<OtaPackageId>> assign(DeviceId device, OtaPackageId id);

  /** Removes the device's firmware assignment; completes with the package it had, if any. */
  CompletionStage<Optional<OtaPackageId>> unassign(DeviceId device);

  /** The package assigned to {@code device} itself as its firmware, if any. */
  CompletionStage<Optional<OtaPackageId>> assignment(DeviceId device);

  /**
   * Assigns package {@code id} to a device profile as its firmware (what its devices without their
   * own get), replacing what was assigned. Whether the profile exists is the caller's concern.
   *
   * @return the package assigned before, if any; fails with {@link OtaPackageConflictException}
   *     when the package is gone or being deleted (nothing is then assigned)
   */
  CompletionStage<Optional<OtaPackageId>> assignToProfile(DeviceProfileId profile, OtaPackageId id);

  /** Removes the profile's firmware assignment; completes with the package it had, if any. */
  CompletionStage<Optional<OtaPackageId>> unassignProfile(DeviceProfileId profile);

  /** The package assigned to the device profile as its firmware, if any. */
  CompletionStage<Optional<OtaPackageId>> profileAssignment(DeviceProfileId profile);

  /** Up to {@code limit} of the device profiles assigned the package, in no particular order. */
  CompletionStage<List<DeviceProfileId>> assignedProfiles(OtaPackageId id, int limit);
}
