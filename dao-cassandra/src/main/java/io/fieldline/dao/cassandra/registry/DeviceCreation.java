package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.CredentialsType;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.DeviceId;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Creating a device: reserve the name ({@code device_by_name ... IF NOT EXISTS}), then the
 * credential's key ({@link CredentialIndex}), then write the {@code devices} row, so a conflicting
 * create never overwrites anything; if the credential is taken the name is released again.
 *
 * <p>A create interrupted by a crash, or whose timed-out lightweight transaction was applied after
 * all, can leave a reserved name or key pointing at no device: reads treat those as absent, and the
 * next create of that name finishes the interrupted one (same id) instead of failing on the name
 * for ever; the row of a finished create is then written with {@code IF NOT EXISTS}, so of two
 * creates finishing the same one only the first writes it (the other gets that device if it asked
 * for the same credential, else a conflict).
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceCreation {

  private final DeviceTable table;
  private final CredentialIndex index;
  private final DeviceNames names;

  DeviceCreation(DeviceTable table, CredentialIndex index, DeviceNames names) {
    this.table = table;
    this.index = index;
    this.names = names;
  }

  /** Creates the device; fails with {@link DeviceConflictException} on a taken name or key. */
  CompletionStage<Device> create(String name, String type, CredentialColumns credentials) {
    long createdTime = System.currentTimeMillis();
    UUID fresh = DeviceId.random().value();
    return names
        .reserve(name, fresh)
        .thenCompose(
            owner -> {
              if (owner.equals(fresh)) {
                return CompletableFuture.completedFuture(fresh);
              }
              // The name is taken. If its owner has no devices row, an earlier create died
              // half-way (a timed-out lightweight transaction may still have been applied):
              // finish that one instead of leaving the name blocked forever.
              return table
                  .load(owner)
                  .thenApply(
                      existing -> {
                        if (existing.isPresent()) {
                          throw new DeviceConflictException("device name '" + name + "' is taken");
                        }
                        return owner;
                      });
            })
        .thenCompose(
            id ->
                index
                    .reserve(credentials.key(), id)
                    .thenCompose(
                        owner -> {
                          if (!owner.equals(id)) {
                            return names
                                .release(name, id)
                                .thenApply(
                                    released -> {
                                      throw new DeviceConflictException(taken(credentials.type()));
                                    });
                          }
                          Device device =
                              new Device(
                                  new DeviceId(id),
                                  name,
                                  type,
                                  credentials.accessToken(),
                                  createdTime);
                          DeviceRow row = new DeviceRow(device, credentials);
                          return id.equals(fresh)
                              ? table.insert(row).thenApply(DeviceRow::device)
                              : finishResumed(row);
                        }));
  }

  /** The conflict message when another device holds a credential of this type. */
  static String taken(CredentialsType type) {
    return switch (type) {
      case ACCESS_TOKEN -> "access token is taken";
      case MQTT_BASIC -> "MQTT_BASIC credentials with this client id and user name are taken";
      case X509_CERTIFICATE -> "X509_CERTIFICATE is taken by another device";
    };
  }

  // A resumed create may race another one resuming the same id: the devices row decides, once.
  // The loser gets the winner's device when it asked for the same credential, else a conflict.
  private CompletionStage<Device> finishResumed(DeviceRow row) {
    return table
        .insertIfAbsent(row)
        .thenApply(
            existing -> {
              if (existing.isEmpty()) {
                return row.device();
              }
              DeviceRow winner = existing.get();
              if (winner.credentials().key().equals(row.credentials().key())) {
                return winner.device();
              }
              throw new DeviceConflictException(
                  "device name '" + row.device().name() + "' is taken");
            });
  }
}
