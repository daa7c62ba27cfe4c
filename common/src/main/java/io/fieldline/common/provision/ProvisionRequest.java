package io.fieldline.common.provision;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.credentials.DeviceCredentials;
import java.io.IOException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A provisioning request, ThingsBoard's JSON:
 *
 * <pre>{@code
 * {"deviceName": "sensor-1", "provisionDeviceKey": "...", "provisionDeviceSecret": "...",
 *  "credentialsType": "ACCESS_TOKEN", "token": "..."}
 * }</pre>
 *
 * {@code credentialsType} is optional (absent: the server generates an access token); {@code
 * MQTT_BASIC} comes with {@code clientId}, {@code username} and {@code password}, {@code
 * X509_CERTIFICATE} with {@code hash} (the certificate, PEM or its Base64 body). Fields the request
 * does not use are ignored. Only the shape is checked when parsing; the credential is built (and
 * checked) by {@link #credentials()}, after the key and secret, so a request with a wrong secret
 * learns nothing about its credential.
 *
 * @param deviceName the name, trimmed; null when absent (the server generates one)
 * @param provisionDeviceKey the profile's provision key; null when absent
 * @param provisionDeviceSecret the profile's secret; null when absent
 * @param credentialsType the credential type as sent; null when absent
 * @param token ACCESS_TOKEN: the token to use; null to generate one
 * @param clientId MQTT_BASIC client id
 * @param username MQTT_BASIC user name
 * @param password MQTT_BASIC password
 * @param hash X509_CERTIFICATE: the certificate
 */
public record ProvisionRequest(
    @Nullable String deviceName,
    @Nullable String provisionDeviceKey,
    @Nullable String provisionDeviceSecret,
    @Nullable String credentialsType,
    @Nullable String token,
    @Nullable String clientId,
    @Nullable String username,
    @Nullable String password,
    @Nullable String hash) {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * Parses a request's payload.
   *
   * @throws IllegalArgumentException when it is not a JSON object, or a field is not a string
   */
  public static ProvisionRequest parse(byte[] payload) {
    JsonNode json;
    try {
      json = MAPPER.readTree(payload);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("the request is not valid JSON");
    } catch (IOException e) {
      throw new IllegalArgumentException("the request cannot be read");
    }
    if (json == null || !json.isObject()) {
      throw new IllegalArgumentException("the request must be a JSON object");
    }
    String name = text(json, "deviceName");
    return new ProvisionRequest(
        name == null ? null : name.strip(),
        text(json, "provisionDeviceKey"),
        text(json, "provisionDeviceSecret"),
        text(json, "credentialsType"),
        text(json, "token"),
        text(json, "clientId"),
        text(json, "username"),
        text(json, "password"),
        text(json, "hash"));
  }

  private static @Nullable String text(JsonNode json, String field) {
    JsonNode value = json.get(field);
    if (value == null || value.isNull()) {
      return null;
    }
    if (!value.isTextual()) {
      throw new IllegalArgumentException(field + " must be a string");
    }
    return value.textValue();
  }

  /** Whether both the key and the secret were given (not absent, not empty). */
  public boolean hasKeyAndSecret() {
    return provisionDeviceKey != null
        && !provisionDeviceKey.isEmpty()
        && provisionDeviceSecret != null
        && !provisionDeviceSecret.isEmpty();
  }

  /**
   * The credential the device asks for; empty when the server is to generate an access token (no
   * {@code credentialsType}, or ACCESS_TOKEN without a token).
   *
   * @throws IllegalArgumentException for an unknown type, or a credential that is not valid (the
   *     rules of {@link DeviceCredentials})
   */
  public Optional<DeviceCredentials> credentials() {
    if (credentialsType == null) {
      return Optional.empty();
    }
    CredentialsType type;
    try {
      type = CredentialsType.valueOf(credentialsType);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "credentialsType must be ACCESS_TOKEN, MQTT_BASIC or X509_CERTIFICATE");
    }
    return switch (type) {
      case ACCESS_TOKEN ->
          token == null || token.isEmpty()
              ? Optional.empty()
              : Optional.of(new DeviceCredentials.AccessToken(token));
      case MQTT_BASIC -> Optional.of(new DeviceCredentials.MqttBasic(clientId, username, password));
      case X509_CERTIFICATE -> {
        if (hash == null || hash.isBlank()) {
          throw new IllegalArgumentException("X509_CERTIFICATE needs the certificate in hash");
        }
        yield Optional.of(DeviceCredentials.X509Certificate.parse(hash));
      }
    };
  }

  /** Never prints the secret, the password or the token. */
  @Override
  public String toString() {
    return "ProvisionRequest[deviceName="
        + deviceName
        + ", provisionDeviceKey="
        + provisionDeviceKey
        + ", credentialsType="
        + credentialsType
        + "]";
  }
}
