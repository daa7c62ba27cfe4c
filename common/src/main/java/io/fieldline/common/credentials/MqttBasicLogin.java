package io.fieldline.common.credentials;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What an MQTT client presented in CONNECT, looked up as an {@link CredentialsType#MQTT_BASIC}
 * credential: ThingsBoard's three forms are client id only, user name (+ password), and client id +
 * user name + password.
 *
 * @param clientId the CONNECT client identifier, or {@code null} if empty
 * @param userName the CONNECT user name, or {@code null} if absent or empty
 * @param password the CONNECT password bytes, or {@code null} if absent
 */
public record MqttBasicLogin(
    @Nullable String clientId, @Nullable String userName, byte @Nullable [] password) {

  @Override
  public boolean equals(@Nullable Object other) {
    return other instanceof MqttBasicLogin that
        && Objects.equals(clientId, that.clientId)
        && Objects.equals(userName, that.userName)
        && Arrays.equals(password, that.password);
  }

  @Override
  public int hashCode() {
    return 31 * Objects.hash(clientId, userName) + Arrays.hashCode(password);
  }

  /** Never prints the password. */
  @Override
  public String toString() {
    return "MqttBasicLogin[clientId="
        + clientId
        + ", userName="
        + userName
        + ", password="
        + (password == null ? "absent" : "present")
        + "]";
  }
}
