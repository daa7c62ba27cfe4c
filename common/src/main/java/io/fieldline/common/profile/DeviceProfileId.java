package io.fieldline.common.profile;

import java.util.Objects;
import java.util.UUID;

/** The identity of a device profile: a UUID, ThingsBoard's {@code DEVICE_PROFILE} entity id. */
public record DeviceProfileId(UUID value) {

  public DeviceProfileId {
    Objects.requireNonNull(value, "value");
  }

  public static DeviceProfileId random() {
    return new DeviceProfileId(UUID.randomUUID());
  }

  @Override
  public String toString() {
    return value.toString();
  }
}
