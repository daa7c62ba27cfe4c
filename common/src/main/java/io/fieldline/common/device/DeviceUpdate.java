package io.fieldline.common.device;

import io.fieldline.common.DeviceId;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The new values of a device's editable fields.
 *
 * @param id the device to change
 * @param name its new (or same) unique name
 * @param type its type
 * @param label its label, null for none
 * @param additionalInfoJson a JSON object as text, null for none
 */
public record DeviceUpdate(
    DeviceId id,
    String name,
    String type,
    @Nullable String label,
    @Nullable String additionalInfoJson) {

  public DeviceUpdate {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }
}
