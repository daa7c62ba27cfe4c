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

  /**
   * Whether this id is one the server keeps for its own writes (the start-up warm-up): its most
   * significant 64 bits are zero, which no generated device id has (random and time-based UUIDs
   * carry a version there). Such writes are stored like any other, but never exported.
   */
  public boolean reserved() {
    return value.getMostSignificantBits() == 0L;
  }

  @Override
  public String toString() {
    return value.toString();
  }
}
