package io.fieldline.common.profile;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A device profile, ThingsBoard's fields that Fieldline keeps. What devices of one kind share; here
 * that is how they may provision themselves.
 *
 * @param id the profile id
 * @param name unique name
 * @param type ThingsBoard's profile type, always {@code "DEFAULT"}
 * @param transportType ThingsBoard's transport type as given ({@code "DEFAULT"}, {@code "MQTT"},
 *     ...); informative, Fieldline's device API is the same for all
 * @param provisionType whether and how devices may provision themselves with {@code
 *     provisionDeviceKey}
 * @param provisionDeviceKey the key a provisioning request names the profile by (unique), null for
 *     none
 * @param secret the provision secret, hashed; null for none
 * @param description free text, null for none
 * @param isDefault ThingsBoard's default-profile flag (at most one profile has it)
 * @param createdTime creation time, epoch milliseconds
 */
public record DeviceProfile(
    DeviceProfileId id,
    String name,
    String type,
    String transportType,
    ProvisionType provisionType,
    @Nullable String provisionDeviceKey,
    @Nullable ProvisionSecret secret,
    @Nullable String description,
    boolean isDefault,
    long createdTime) {

  public DeviceProfile {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(transportType, "transportType");
    Objects.requireNonNull(provisionType, "provisionType");
  }

  /**
   * Whether a provisioning request with this profile's key and {@code candidateSecret} may go on:
   * provisioning enabled, a secret set, and {@code candidateSecret} is it (compared in constant
   * time).
   */
  public boolean admitsProvisioning(String candidateSecret) {
    return provisionType != ProvisionType.DISABLED
        && secret != null
        && secret.matches(candidateSecret);
  }
}
