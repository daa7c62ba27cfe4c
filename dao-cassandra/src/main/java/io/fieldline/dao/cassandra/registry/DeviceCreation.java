package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Creating a device: reserve the name ({@code device_by_name ... IF NOT EXISTS}), then the
 * credential's key ({@link CredentialIndex}), then write the {@code devices} row, so a conflicting
 * create never overwrites anything; if the credential is taken the name is released again.
 *
 * <p>A create interrupted by a crash, or whose timed-out lightweight transaction was applied after
 * all, can leave a reserved name or key pointing at no device: reads treat those as absent, and the
 * next create of that name finishes the interrupted one (same id) instead of failing on the name
 * for ever. A create still running looks the same to another create of that name (its row is not
 * written yet), so every create writes its row with {@code IF NOT EXISTS}: of two creates of the
 * same id only the first writes it, and the other gets that device if it asked for the same
 * credential, else a conflict (its credential's key released). A bulk creation keeps a hundred
 * names reserved before their rows are written, which makes that window wide enough to matter.
 *
 * <p>Thread-safe; stages complete on driver I/O threads.
 */
final class DeviceCreation {

  /** The most devices {@link #createAll} takes at once (their names go in one batch). */
  static final int MAX_BATCH = 100;

  /** Creations of one {@link #createAll} finishing at once, after their names are reserved. */
  static final int FINISH_CONCURRENCY = 8;

  private final DeviceTable table;
  private final CredentialIndex index;
  private final DeviceNames names;

  DeviceCreation(DeviceTable table, CredentialIndex index, DeviceNames names) {
    this.table = table;
    this.index = index;
    this.names = names;
  }

  /** A device to create: its name, type, credential and additional info (JSON, or null). */
  record Draft(
      String name,
      String type,
      CredentialColumns credentials,
      @Nullable String additionalInfoJson) {}

  /** Creates the device; fails with {@link DeviceConflictException} on a taken name or key. */
  CompletionStage<Device> create(String name, String type, CredentialColumns credentials) {
    return create(new Draft(name, type, credentials, null));
  }

  /** Creates the device; fails with {@link DeviceConflictException} on a taken name or key. */
  CompletionStage<Device> create(Draft draft) {
    UUID fresh = DeviceId.random().value();
    return names.reserve(draft.name(), fresh).thenCompose(owner -> claimed(draft, fresh, owner));
  }

  /**
   * Creates the devices, each as {@link #create(Draft)} does, but reserves all their names in one
   * lightweight transaction ({@link DeviceNames#reserveAll}); the rest of each creation (its
   * credential's key, its row) runs at most {@value #FINISH_CONCURRENCY} at a time.
   *
   * @param drafts at most {@value #MAX_BATCH}, of distinct names
   * @return one stage per draft, in order
   */
  List<CompletionStage<Device>> createAll(List<Draft> drafts) {
    if (drafts.size() > MAX_BATCH) {
      throw new IllegalArgumentException(
          drafts.size() + " devices to create at once, more than " + MAX_BATCH);
    }
    Map<String, UUID> fresh = new LinkedHashMap<>();
    for (Draft draft : drafts) {
      if (fresh.putIfAbsent(draft.name(), DeviceId.random().value()) != null) {
        throw new IllegalArgumentException("device name '" + draft.name() + "' given twice");
      }
    }
    CompletionStage<Map<String, UUID>> owners = names.reserveAll(fresh);
    // This call's own bound (the store's writes have theirs).
    WriteLimiter finishing = new WriteLimiter(FINISH_CONCURRENCY, MAX_BATCH);
    return drafts.stream()
        .map(
            draft ->
                owners.thenCompose(
                    reserved ->
                        finishing.submit(
                            () ->
                                claimed(
                                    draft,
                                    Objects.requireNonNull(fresh.get(draft.name())),
                                    // reserveAll answers an owner for every name it was given
                                    Objects.requireNonNull(reserved.get(draft.name()))))))
        .toList();
  }

  // The name is reserved for `fresh` when `owner` is `fresh`; else it was taken, and if its owner
  // has no devices row an earlier create died half-way (a timed-out lightweight transaction may
  // still have been applied): finish that one instead of leaving the name blocked forever.
  private CompletionStage<Device> claimed(Draft draft, UUID fresh, UUID owner) {
    CompletionStage<UUID> id =
        owner.equals(fresh)
            ? CompletableFuture.completedFuture(fresh)
            : table
                .load(owner)
                .thenApply(
                    existing -> {
                      if (existing.isPresent()) {
                        throw new DeviceConflictException(
                            "device name '" + draft.name() + "' is taken");
                      }
                      return owner;
                    });
    long createdTime = System.currentTimeMillis();
    CredentialColumns credentials = draft.credentials();
    return id.thenCompose(
        claimed ->
            index
                .reserve(credentials.key(), claimed)
                .thenCompose(
                    keyOwner -> {
                      if (!keyOwner.equals(claimed)) {
                        return names
                            .release(draft.name(), claimed)
                            .thenApply(
                                released -> {
                                  throw new DeviceConflictException(taken(credentials.type()));
                                });
                      }
                      Device device =
                          new Device(
                              new DeviceId(claimed),
                              draft.name(),
                              draft.type(),
                              credentials.accessToken(),
                              createdTime,
                              null,
                              draft.additionalInfoJson());
                      DeviceRow row = new DeviceRow(device, credentials);
                      return insertOnce(row);
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

  // Creates of one id race when one takes the other's reservation for a create that died: the
  // devices row decides, once. The loser gets the winner's device when it asked for the same
  // credential, else a conflict; the key it reserved for that id is not the row's, so it goes.
  private CompletionStage<Device> insertOnce(DeviceRow row) {
    return table
        .insertIfAbsent(row)
        .thenCompose(
            existing -> {
              if (existing.isEmpty()) {
                return CompletableFuture.completedFuture(row.device());
              }
              DeviceRow winner = existing.get();
              if (winner.credentials().key().equals(row.credentials().key())) {
                return CompletableFuture.completedFuture(winner.device());
              }
              return index
                  .release(row.credentials().key(), row.device().id().value())
                  .thenApply(
                      released -> {
                        throw new DeviceConflictException(
                            "device name '" + row.device().name() + "' is taken");
                      });
            });
  }
}
