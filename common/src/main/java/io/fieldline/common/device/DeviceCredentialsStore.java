package io.fieldline.common.device;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.StoredCredentials;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The administration side of device credentials, for the REST API: a device has exactly one
 * credential ({@link DeviceCredentials}), which can be read, replaced by one of any type, or given
 * when the device is created. Lookups by credential (the CONNECT path) are {@link
 * DeviceRegistry}'s. A credential belongs to one device at most: giving a device a credential
 * another device holds fails with {@link DeviceConflictException}. Every method is asynchronous and
 * never blocks the caller; invalid input fails with {@link IllegalArgumentException}.
 *
 * <p>Replacing a credential does not tell other nodes' caches or close sessions: that is {@link
 * CredentialsRevocation}'s job, which the caller runs once the replacement is stored.
 */
public interface DeviceCredentialsStore {

  /** The device's credential, or empty when there is no such device. */
  CompletionStage<Optional<StoredCredentials>> findCredentials(DeviceId device);

  /**
   * Gives the device {@code credentials} in place of its current credential, whatever the types.
   * For an {@link DeviceCredentials.MqttBasic} with a null password, the current password is kept
   * whenever the current credential is MQTT_BASIC with a password, even if the client id or user
   * name change (a read shows every password as null, so posting a read back with other ids must
   * not remove the password); the stage fails with {@link IllegalArgumentException} if the new
   * credential then has no user name to go with it. With no password to keep, a null password means
   * no password; an empty one always does.
   *
   * @return the credential now stored, or empty when there is no such device
   */
  CompletionStage<Optional<StoredCredentials>> replaceCredentials(
      DeviceId device, DeviceCredentials credentials);

  /**
   * Creates a device with {@code credentials} (ThingsBoard's device-with-credentials). An
   * MQTT_BASIC null password means no password.
   *
   * @return the stored device; fails with {@link DeviceConflictException} when the name or the
   *     credential is already taken
   */
  CompletionStage<Device> createWithCredentials(
      String name, String type, DeviceCredentials credentials);
}
