package io.fieldline.common;

import java.util.Objects;
import java.util.UUID;

/** The identity of a device: a UUID, rendered like ThingsBoard's entity ids. */
public record DeviceId(UUID value) {

  public DeviceId {
    Objects.requireNonNull(value, "value");
  }

  public static DeviceId random() {
    return new DeviceId(UUID.randomUUID());
  }

  /**
   * Parses the textual UUID form.
   *
   * @throws IllegalArgumentException if {@code text} is not a UUID
   */
  public static DeviceId parse(String text) {
    return new DeviceId(UUID.fromString(text));
  }

  @Override
  public String toString() {
    return value.toString();
  }
}
