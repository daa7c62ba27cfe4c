package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.ota.OtaPackageId;
import io.fieldline.fleet.ota.FirmwareAssignments;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A device's {@code firmwareId} in ThingsBoard's device JSON, for {@code DeviceRoutes}: {@code POST
 * /api/device} with {@code "firmwareId":{"entityType":"OTA_PACKAGE","id":..}} assigns that firmware
 * ({@code null} removes it, no field leaves it: the device then has its profile's firmware, if
 * any), checked before the device is saved and applied after; {@code GET /api/device/{id}} and the
 * save's answer carry the device's {@code firmwareId} (null when none), rendered into the device's
 * JSON. Stateless apart from the assignments it calls.
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

  /**
   * After a save: the body's {@code firmwareId} applied to the saved device, if any ({@link
   * FirmwareAssignments#set} brings its {@code fw_*} attributes up to date). When the body has no
   * {@code firmwareId} but names a {@code deviceProfileId}, the attributes are brought up to date
   * with its firmware ({@link FirmwareAssignments#sync}): it may have moved to a profile with other
   * firmware (they are written only if they differ). One sync either way.
   */
  CompletionStage<Optional<Device>> apply(Optional<Device> device, JsonNode body) {
    Optional<Optional<OtaPackageId>> requested = OtaJson.firmwareId(body);
    JsonNode profile = body.path("deviceProfileId");
    boolean profileNamed = !profile.isMissingNode() && !profile.isNull();
    FirmwareAssignments firmware = assignments;
    if (device.isEmpty() || firmware == null || (requested.isEmpty() && !profileNamed)) {
      return CompletableFuture.completedFuture(device);
    }
    DeviceId id = device.get().id();
    CompletionStage<?> applied =
        requested.isEmpty() ? firmware.sync(id) : firmware.set(id, requested.get());
    return applied.thenApply(done -> device);
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
