package io.fieldline.common.profile;

import io.fieldline.common.NameRules;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A device profile as an administrator writes it, for a create or an update. Validated by {@link
 * DeviceProfileStore} (invalid input fails with {@link IllegalArgumentException}).
 *
 * @param name unique name
 * @param type ThingsBoard's profile type ({@code "DEFAULT"})
 * @param transportType ThingsBoard's transport type ({@code "DEFAULT"}, {@code "MQTT"}, ...)
 * @param provisionType how devices may provision themselves
 * @param provisionDeviceKey the provision key, null for none; required unless {@code provisionType}
 *     is {@link ProvisionType#DISABLED}
 * @param provisionDeviceSecret the secret in clear (only its hash is stored); null on an update
 *     keeps the current secret (a read never shows it, so posting a read back must not remove it);
 *     required, once kept or given, unless {@code provisionType} is {@link ProvisionType#DISABLED}
 * @param description free text, null for none
 * @param isDefault ThingsBoard's default flag; setting it clears it on every other profile
 */
public record DeviceProfileDraft(
    String name,
    String type,
    String transportType,
    ProvisionType provisionType,
    @Nullable String provisionDeviceKey,
    @Nullable String provisionDeviceSecret,
    @Nullable String description,
    boolean isDefault) {

  /** Longest provision secret, in characters. */
  public static final int MAX_SECRET_LENGTH = 255;

  /** Longest description, in characters. */
  public static final int MAX_DESCRIPTION_LENGTH = 10_000;

  public DeviceProfileDraft {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(transportType, "transportType");
    Objects.requireNonNull(provisionType, "provisionType");
    check("name", name);
    check("type", type);
    check("transportType", transportType);
    if (provisionDeviceKey != null) {
      check("provisionDeviceKey", provisionDeviceKey);
    } else if (provisionType != ProvisionType.DISABLED) {
      throw new IllegalArgumentException(
          "provisionDeviceKey is required when provisionType is " + provisionType);
    }
    if (provisionDeviceSecret != null) {
      if (provisionDeviceSecret.isEmpty() || provisionDeviceSecret.length() > MAX_SECRET_LENGTH) {
        throw new IllegalArgumentException(
            "provisionDeviceSecret must have 1.." + MAX_SECRET_LENGTH + " characters");
      }
    }
    if (description != null && description.length() > MAX_DESCRIPTION_LENGTH) {
      throw new IllegalArgumentException(
          "description must have at most " + MAX_DESCRIPTION_LENGTH + " characters");
    }
  }

  private static void check(String field, String value) {
    String violation = NameRules.violation(value, NameRules.MAX_LENGTH);
    if (violation != null) {
      throw new IllegalArgumentException(field + " " + violation);
    }
  }

  /** Never prints the secret. */
  @Override
  public String toString() {
    return "DeviceProfileDraft[name="
        + name
        + ", provisionType="
        + provisionType
        + ", provisionDeviceKey="
        + provisionDeviceKey
        + ", provisionDeviceSecret="
        + (provisionDeviceSecret == null ? "null" : "hidden")
        + "]";
  }
}
