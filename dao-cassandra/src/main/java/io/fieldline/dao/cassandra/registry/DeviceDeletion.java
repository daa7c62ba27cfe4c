package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Deleting a device: its {@code devices} row first, by a lightweight transaction conditioned on the
 * row as read (the columns a replacement is conditioned on), then its credential's index claim and
 * its name, each released only if it still names this device ({@code IF device_id = ?}).
 *
 * <p>A replacement that swaps the row between the read and the delete makes the delete fail; it
 * then reads the row again and deletes what it holds now, so the claim it releases is the one the
 * row held when it went (one logged batch of what was read could leave the replacement's new claim
 * behind, blocking that credential for every other device). A replacement that comes after the
 * delete finds no row and releases its own new claim ({@link CredentialWrites}). A device changed
 * so often that {@value #MAX_ATTEMPTS} reads in a row are stale fails with {@link
 * DeviceConflictException}. A crash after the row went leaves claims naming a device that no longer
 * exists: lookups ignore them, and a create of the same name finishes on that name (see {@link
 * DeviceCreation}).
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceDeletion {

  static final int MAX_ATTEMPTS = 5;

  private final DeviceTable table;
  private final CredentialIndex index;
  private final DeviceNames names;

  DeviceDeletion(DeviceTable table, CredentialIndex index, DeviceNames names) {
    this.table = table;
    this.index = index;
    this.names = names;
  }

  /** Deletes the device; false when there is no such device. */
  CompletionStage<Boolean> delete(UUID id) {
    return reload(id, 1);
  }

  /**
   * Deletes the device from {@code read}, the row as this delete read it. Package-private so that a
   * test can let a replacement land between the read and the delete.
   */
  CompletionStage<Boolean> delete(DeviceRow read, int attempt) {
    UUID id = read.device().id().value();
    return table
        .deleteIfUnchanged(read)
        .thenCompose(
            applied -> {
              if (applied) {
                return release(read).thenApply(released -> true);
              }
              if (attempt >= MAX_ATTEMPTS) {
                throw new DeviceConflictException(
                    "device " + id + " kept changing while it was being deleted; try again");
              }
              // Replaced (or deleted) since it was read.
              return reload(id, attempt + 1);
            });
  }

  private CompletionStage<Boolean> reload(UUID id, int attempt) {
    return table
        .load(id)
        .thenCompose(
            found ->
                found.isEmpty()
                    ? CompletableFuture.completedFuture(false)
                    : delete(found.get(), attempt));
  }

  private CompletionStage<Void> release(DeviceRow deleted) {
    UUID id = deleted.device().id().value();
    CompletableFuture<Void> claim =
        index.release(deleted.credentials().key(), id).toCompletableFuture();
    CompletableFuture<Void> name = names.release(deleted.device().name(), id).toCompletableFuture();
    return CompletableFuture.allOf(claim, name);
  }
}
