package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.Device;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.server.ota.FirmwareAssignments;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A device's {@code firmwareId} in ThingsBoard's device JSON, for {@code DeviceRoutes}: {@code POST
 * /api/device} with {@code "firmwareId":{"entityType":"OTA_PACKAGE","id":..}} assigns that firmware
 * ({@code null} removes it, no field leaves it), checked before the device is saved and applied
 * after; {@code GET /api/device/{id}} and the save's answer carry the device's {@code firmwareId}
 * (null when none), rendered into the device's JSON. Stateless apart from the assignments it calls.
 */
final class DeviceFirmwareJson {

  /** Devices without firmware: no {@code firmwareId} rendered, one in a body refused. */
  static final DeviceFirmwareJson NONE = new DeviceFirmwareJson(null);

  private final @Nullable FirmwareAssignments assignments;

  DeviceFirmwareJson(@Nullable FirmwareAssignments assignments) {
    this.assignments = assignments;
  }

  /**
   * Completes when the body's {@code firmwareId}, if any, names a package a device may be assigned;
   * fails with {@link IllegalArgumentException} (400) otherwise, before anything is saved.
   */
  CompletionStage<Void> check(JsonNode body) {
    Optional<Optional<OtaPackageId>> requested = OtaJson.firmwareId(body);
    if (requested.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    if (assignments == null) {
      throw new IllegalArgumentException("firmware assignment is not available on this server");
    }
    if (requested.get().isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return assignments.assignable(requested.get().get()).thenApply(firmware -> null);
  }

  /** After a save: the body's {@code firmwareId} applied to the saved device, if any. */
  CompletionStage<Optional<Device>> apply(Optional<Device> device, JsonNode body) {
    Optional<Optional<OtaPackageId>> requested = OtaJson.firmwareId(body);
    if (device.isEmpty() || requested.isEmpty() || assignments == null) {
      return CompletableFuture.completedFuture(device);
    }
    return assignments.set(device.get().id(), requested.get()).thenApply(assigned -> device);
  }

  /** {@code view}, the device's JSON, with its {@code firmwareId} when firmware is served. */
  CompletionStage<ObjectNode> render(Device device, ObjectNode view) {
    if (assignments == null) {
      return CompletableFuture.completedFuture(view);
    }
    return assignments
        .of(device.id())
        .thenApply(
            firmware -> {
              view.set(
                  "firmwareId",
                  firmware.<JsonNode>map(OtaJson::packageId).orElse(JsonViews.MAPPER.nullNode()));
              return view;
            });
  }
}
