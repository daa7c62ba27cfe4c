package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * How a credential is written: its columns (an MQTT_BASIC password hashed off the I/O threads), and
 * the replacement of a device's credential by one of any type.
 *
 * <p>A replacement reads the row, reserves the new key in its index (also when it is the current
 * one, which repairs a lost claim), swaps the row's credential columns with a lightweight
 * transaction conditioned on the row as read, then releases the old key. A conflict at either step
 * (the new key held by another device, the row changed or deleted meanwhile) fails with {@link
 * DeviceConflictException}, releasing the new key unless the row holds it by then; the device keeps
 * the credential its row holds. A key is only ever released after reading the row and finding that
 * it does not hold it. A crash between the steps leaves at most a claim in an index that no row
 * holds: lookups ignore it, and only the device it names can take that key (by retrying), so a
 * retried replacement finishes it.
 *
 * <p>Thread-safe; stages complete on driver I/O or bcrypt threads.
 */
final class CredentialWrites {

  private final DeviceTable table;
  private final CredentialIndex index;
  private final PasswordHashing passwords;

  CredentialWrites(DeviceTable table, CredentialIndex index, PasswordHashing passwords) {
    this.table = table;
    this.index = index;
    this.passwords = passwords;
  }

  /**
   * The columns {@code requested} is stored as. An MQTT_BASIC password is hashed; an empty one
   * means "no password"; a null one keeps {@code current}'s hash when {@code current} is MQTT_BASIC
   * with a password, whatever the new client id and user name (the hash covers the password alone),
   * and means "no password" when there is no hash to keep.
   *
   * <p>A null password is what a GET shows for every MQTT_BASIC credential, so a ThingsBoard-style
   * GET, change the ids, POST must not turn a credential with a password into one that accepts any
   * password. A kept password needs a user name (MQTT sends no password without one): without it
   * the stage fails with {@link IllegalArgumentException}, rather than silently dropping the
   * password.
   */
  CompletionStage<CredentialColumns> columns(
      DeviceCredentials requested, @Nullable CredentialColumns current) {
    if (requested instanceof DeviceCredentials.MqttBasic basic) {
      return basicColumns(basic, current);
    }
    if (requested instanceof DeviceCredentials.X509Certificate certificate) {
      return CompletableFuture.completedFuture(CredentialColumns.certificate(certificate));
    }
    return CompletableFuture.completedFuture(
        CredentialColumns.token(((DeviceCredentials.AccessToken) requested).token()));
  }

  private CompletionStage<CredentialColumns> basicColumns(
      DeviceCredentials.MqttBasic basic, @Nullable CredentialColumns current) {
    String password = basic.password();
    if (password != null && basic.hasPassword()) {
      return passwords
          .hash(password)
          .thenApply(hash -> CredentialColumns.basic(basic.clientId(), basic.userName(), hash));
    }
    String kept = basic.password() == null && current != null ? current.basicPasswordHash() : null;
    if (kept != null && basic.userName() == null) {
      return CompletableFuture.failedFuture(
          new IllegalArgumentException(
              "MQTT_BASIC without a userName cannot keep the current password (MQTT sends no"
                  + " password without a user name): give a userName, or \"password\": \"\" to"
                  + " remove the password"));
    }
    return CompletableFuture.completedFuture(
        CredentialColumns.basic(basic.clientId(), basic.userName(), kept));
  }

  /** Replaces the device's credential; empty when there is no such device. */
  CompletionStage<Optional<StoredCredentials>> replace(UUID id, DeviceCredentials requested) {
    return table
        .load(id)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.empty());
              }
              DeviceRow current = found.get();
              return columns(requested, current.credentials())
                  .thenCompose(next -> swap(current, next))
                  .thenApply(Optional::of);
            });
  }

  /**
   * Reserves {@code next}'s key, swaps the row from {@code current} to {@code next}, then releases
   * the key the row no longer holds. Package-private so that a test can run two replacements' steps
   * in a chosen order.
   */
  CompletionStage<StoredCredentials> swap(DeviceRow current, CredentialColumns next) {
    UUID id = current.device().id().value();
    CredentialKey oldKey = current.credentials().key();
    CredentialKey newKey = next.key();
    return reserve(id, next)
        .thenCompose(reserved -> table.replaceCredentials(current, next))
        .thenCompose(
            applied -> {
              if (!applied) {
                return releaseUnlessHeld(id, newKey)
                    .thenApply(
                        released -> {
                          throw new DeviceConflictException(
                              "the credentials of device "
                                  + id
                                  + " changed meanwhile, or it was deleted; read them again");
                        });
              }
              CompletionStage<Void> cleared =
                  oldKey.equals(newKey)
                      ? CompletableFuture.completedFuture(null)
                      : releaseUnlessHeld(id, oldKey);
              return cleared.thenApply(done -> next.view(current.device()));
            });
  }

  /**
   * Reserves {@code next}'s key for the device, failing with {@link DeviceConflictException} when
   * another device holds it. Run even when the row already holds the key: {@code IF NOT EXISTS}
   * answers the device's own claim as reserved, and writes it back if it went missing, so a retried
   * replacement repairs a row whose index claim was lost.
   */
  CompletionStage<Void> reserve(UUID id, CredentialColumns next) {
    return index
        .reserve(next.key(), id)
        .thenApply(
            owner -> {
              if (!owner.equals(id)) {
                throw new DeviceConflictException(DeviceCreation.taken(next.type()));
              }
              return null;
            });
  }

  /**
   * Releases the device's claim on {@code key} unless its row holds that key now. Both replacements
   * of a device to the same key see their reservation succeed (the device already owns it), so the
   * one whose swap failed must not take the claim of the one whose swap applied; likewise a
   * replacement releasing its old key after another one of the same device went back to it. The
   * read and the release are two steps: a swap to {@code key} landing between them still loses its
   * claim, which the device's next replacement writes back ({@link #reserve}).
   */
  CompletionStage<Void> releaseUnlessHeld(UUID id, CredentialKey key) {
    return table
        .load(id)
        .thenCompose(
            row ->
                row.isPresent() && row.get().credentials().key().equals(key)
                    ? CompletableFuture.completedFuture(null)
                    : index.release(key, id));
  }
}
