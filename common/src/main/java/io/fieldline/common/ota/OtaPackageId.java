package io.fieldline.common.ota;

import java.util.Objects;
import java.util.UUID;

/** The identity of an OTA package: a UUID, ThingsBoard's {@code OTA_PACKAGE} entity id. */
public record OtaPackageId(UUID value) {

  public OtaPackageId {
    Objects.requireNonNull(value, "value");
  }

  public static OtaPackageId random() {
    return new OtaPackageId(UUID.randomUUID());
  }

  /**
   * Parses the textual UUID form.
   *
   * @throws IllegalArgumentException if {@code text} is not a UUID
   */
  public static OtaPackageId parse(String text) {
    return new OtaPackageId(UUID.fromString(text));
  }

  @Override
  public String toString() {
    return value.toString();
  }
}
