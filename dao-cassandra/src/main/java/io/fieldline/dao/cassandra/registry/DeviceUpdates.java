package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceUpdate;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Looking a device up by name, and changing its name, type, label and additional info (its id,
 * creation time and credential stay).
 *
 * <p>An update reads the row, then writes it by a lightweight transaction conditioned on the row as
 * read ({@link DeviceTable#updateIfUnchanged}, the conditions of a delete), so it never resurrects
 * a deleted device and never undoes a concurrent rename. A new name is first reserved in {@code
 * device_by_name} ({@code IF NOT EXISTS}, as a create does): another device's name is a {@link
 * DeviceConflictException} and nothing is written. Once the row is updated the old name is
 * released; if the row changed between the read and the write, the new name is released and the
 * update starts again from a new read, at most {@value #MAX_ATTEMPTS} times. A name is released
 * ({@code IF device_id = ?}) only after reading the row again and finding that it does not have
 * that name: two concurrent renames of one device to the same name both see their reservation
 * succeed, and the one whose write failed must not remove the claim of the one that applied (the
 * read and the release are still two steps, as for credentials in {@link CredentialWrites}).
 *
 * <p>A crash (or a failed release) between the steps leaves a name claimed by the device while its
 * row has another: {@link #findByName} ignores the claim (the row decides), but other devices
 * cannot take that name until this device does (a rename to it finds the device's own claim and
 * succeeds) and lets it go again. A delete releases only the row's current name.
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceUpdates {

  static final int MAX_ATTEMPTS = 5;

  private final DeviceTable table;
  private final DeviceNames names;

  DeviceUpdates(DeviceTable table, DeviceNames names) {
    this.table = table;
    this.names = names;
  }

  /** The device named {@code name}: the claim's owner, if its row has that name. */
  CompletionStage<Optional<Device>> findByName(String name) {
    return names
        .owner(name)
        .thenCompose(
            owner ->
                owner.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<Device>empty())
                    : table
                        .load(owner.get())
                        .thenApply(
                            row ->
                                row.map(DeviceRow::device)
                                    .filter(device -> device.name().equals(name))));
  }

  /** Applies {@code update}; empty when there is no such device. */
  CompletionStage<Optional<Device>> update(DeviceUpdate update) {
    return attempt(update, 1);
  }

  private CompletionStage<Optional<Device>> attempt(DeviceUpdate update, int attempt) {
    UUID id = update.id().value();
    return table
        .load(id)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<Device>empty());
              }
              DeviceRow current = found.get();
              Device was = current.device();
              Device next =
                  new Device(
                      was.id(),
                      update.name(),
                      update.type(),
                      was.accessToken(),
                      was.createdTime(),
                      update.label(),
                      update.additionalInfoJson());
              if (was.name().equals(next.name())) {
                return table
                    .updateIfUnchanged(current, next)
                    .thenCompose(
                        applied ->
                            applied
                                ? CompletableFuture.completedFuture(Optional.of(next))
                                : again(update, attempt));
              }
              return rename(current, next, update, attempt);
            });
  }

  private CompletionStage<Optional<Device>> rename(
      DeviceRow current, Device next, DeviceUpdate update, int attempt) {
    UUID id = next.id().value();
    return names
        .reserve(next.name(), id)
        .thenCompose(
            owner -> {
              if (!owner.equals(id)) {
                throw new DeviceConflictException("device name '" + next.name() + "' is taken");
              }
              return table
                  .updateIfUnchanged(current, next)
                  .thenCompose(
                      applied ->
                          applied
                              ? releaseUnlessHeld(current.device().name(), id)
                                  .thenApply(released -> Optional.of(next))
                              : releaseUnlessHeld(next.name(), id)
                                  .thenCompose(released -> again(update, attempt)));
            });
  }

  private CompletionStage<Void> releaseUnlessHeld(String name, UUID id) {
    return table
        .load(id)
        .thenCompose(
            row ->
                row.isPresent() && row.get().device().name().equals(name)
                    ? CompletableFuture.completedFuture(null)
                    : names.release(name, id));
  }

  // The row changed (or went) since it was read: read it again.
  private CompletionStage<Optional<Device>> again(DeviceUpdate update, int attempt) {
    if (attempt >= MAX_ATTEMPTS) {
      throw new DeviceConflictException(
          "device " + update.id().value() + " kept changing while it was being updated; try again");
    }
    return attempt(update, attempt + 1);
  }
}
