package io.fieldline.common.device;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.credentials.DeviceCredentials;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A provisioned device. Its one credential ({@link DeviceCredentials}) is not part of it, except
 * the access token: the token is what most devices connect with, what the CONNECT path's caches are
 * keyed by and what provisioning tools print, so it stays here, and is null for a device whose
 * credential is of another type. The whole credential is read through {@link
 * DeviceCredentialsStore#findCredentials}.
 *
 * @param id the device id
 * @param name unique, human-chosen name
 * @param type free-form device type ({@code "default"} unless given)
 * @param accessToken the device's access token (the MQTT user name it connects with) when its
 *     credential is {@link CredentialsType#ACCESS_TOKEN}; null for {@link
 *     CredentialsType#MQTT_BASIC} and {@link CredentialsType#X509_CERTIFICATE}
 * @param createdTime creation time, epoch milliseconds
 * @param label free-form label, null when none
 * @param additionalInfoJson ThingsBoard's {@code additionalInfo}: a JSON object as text, null when
 *     none
 */
public record Device(
    DeviceId id,
    String name,
    String type,
    @Nullable String accessToken,
    long createdTime,
    @Nullable String label,
    @Nullable String additionalInfoJson) {

  public Device {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }

  /** A device without label or additional info. */
  public Device(
      DeviceId id, String name, String type, @Nullable String accessToken, long createdTime) {
    this(id, name, type, accessToken, createdTime, null, null);
  }

  /** Whether the device connects with this access token (never true for a token-less device). */
  public boolean hasAccessToken(String token) {
    return token.equals(accessToken);
  }
}
