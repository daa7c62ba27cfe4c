package io.fieldline.common.credentials;

import io.fieldline.common.DeviceId;
import java.util.Objects;

/**
 * A device's credential as the registry keeps it, with nothing secret in it: what {@code GET
 * /api/device/{id}/credentials} shows.
 *
 * @param deviceId the device
 * @param createdTime the device's creation time, epoch milliseconds
 * @param credentials the credential; an {@link DeviceCredentials.MqttBasic} always comes with a
 *     null password, since only a hash of it is stored
 * @param credentialsId what the credential is found by: the token, the certificate's {@link
 *     CertificateFingerprint}, or for MQTT_BASIC a digest of its client id and/or user name
 */
public record StoredCredentials(
    DeviceId deviceId, long createdTime, DeviceCredentials credentials, String credentialsId) {

  public StoredCredentials {
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(credentials, "credentials");
    Objects.requireNonNull(credentialsId, "credentialsId");
  }
}
