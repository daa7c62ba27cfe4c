package io.fieldline.dao.cassandra.registry;

import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.credentials.StoredCredentials;
import io.fieldline.common.device.Device;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The credential columns of a {@code devices} row: the type and, by type, the token, or the client
 * id, user name and bcrypt hash, or the certificate, with the key it is indexed under. Exactly the
 * columns of its type are set; the others are null (so a replacement clears them).
 *
 * @param type the credential's type
 * @param accessToken the token of an ACCESS_TOKEN credential
 * @param credentialsKey the {@code device_by_credentials} key of an MQTT_BASIC or X.509 credential
 * @param clientId an MQTT_BASIC credential's client id, if it has one
 * @param userName an MQTT_BASIC credential's user name, if it has one
 * @param passwordHash an MQTT_BASIC credential's bcrypt hash, null when it has no password
 * @param certificatePem an X.509 credential's certificate
 */
record CredentialColumns(
    CredentialsType type,
    @Nullable String accessToken,
    @Nullable String credentialsKey,
    @Nullable String clientId,
    @Nullable String userName,
    @Nullable String passwordHash,
    @Nullable String certificatePem) {

  CredentialColumns {
    Objects.requireNonNull(type, "type");
    boolean consistent =
        switch (type) {
          case ACCESS_TOKEN -> accessToken != null && credentialsKey == null;
          case MQTT_BASIC -> accessToken == null && credentialsKey != null;
          case X509_CERTIFICATE ->
              accessToken == null && credentialsKey != null && certificatePem != null;
        };
    if (!consistent) {
      throw new IllegalArgumentException("incomplete " + type + " credential columns");
    }
  }

  static CredentialColumns token(String token) {
    return new CredentialColumns(CredentialsType.ACCESS_TOKEN, token, null, null, null, null, null);
  }

  static CredentialColumns basic(
      @Nullable String clientId, @Nullable String userName, @Nullable String passwordHash) {
    return new CredentialColumns(
        CredentialsType.MQTT_BASIC,
        null,
        CredentialKey.basic(clientId, userName).value(),
        clientId,
        userName,
        passwordHash,
        null);
  }

  static CredentialColumns certificate(DeviceCredentials.X509Certificate certificate) {
    return new CredentialColumns(
        CredentialsType.X509_CERTIFICATE,
        null,
        CredentialKey.certificate(certificate.fingerprint()).value(),
        null,
        null,
        null,
        certificate.pem());
  }

  /** Where this credential is indexed. */
  CredentialKey key() {
    return type == CredentialsType.ACCESS_TOKEN
        ? CredentialKey.accessToken(Objects.requireNonNull(accessToken))
        : new CredentialKey(false, Objects.requireNonNull(credentialsKey));
  }

  /** The hash of an MQTT_BASIC credential's password; null when it has none or is another type. */
  @Nullable String basicPasswordHash() {
    return type == CredentialsType.MQTT_BASIC ? passwordHash : null;
  }

  /** The credential without its secret, as the REST API may show it. */
  StoredCredentials view(Device device) {
    DeviceCredentials credentials =
        switch (type) {
          case ACCESS_TOKEN ->
              new DeviceCredentials.AccessToken(Objects.requireNonNull(accessToken));
          case MQTT_BASIC -> new DeviceCredentials.MqttBasic(clientId, userName, null);
          case X509_CERTIFICATE ->
              DeviceCredentials.X509Certificate.parse(Objects.requireNonNull(certificatePem));
        };
    return new StoredCredentials(
        device.id(), device.createdTime(), credentials, key().credentialsId());
  }

  /** Never prints the hash. */
  @Override
  public String toString() {
    return "CredentialColumns[" + type + ", key=" + key().credentialsId() + "]";
  }
}
