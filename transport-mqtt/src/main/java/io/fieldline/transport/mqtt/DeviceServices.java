package io.fieldline.transport.mqtt;

import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import java.util.Objects;
import java.util.Optional;

/**
 * The fleet services the device API offers beside telemetry, attributes and RPC: firmware downloads
 * ({@code v2/fw/request/...}) and self-provisioning (the {@code provision} login). The server wires
 * both; tools and tests of other features use {@link #none()}. Immutable; its components are
 * thread-safe.
 *
 * @param firmware firmware downloads: bounds, source, meters
 * @param provisioning answers {@code /provision/request}; empty where no device profiles are
 *     served, and the {@code provision} login is then an ordinary (unknown) credential
 */
public record DeviceServices(FirmwareDelivery firmware, Optional<DeviceProvisioning> provisioning) {

  public DeviceServices {
    Objects.requireNonNull(firmware, "firmware");
    Objects.requireNonNull(provisioning, "provisioning");
  }

  /** Neither firmware ({@link FirmwareDelivery#none()}) nor provisioning. */
  public static DeviceServices none() {
    return new DeviceServices(FirmwareDelivery.none(), Optional.empty());
  }
}
