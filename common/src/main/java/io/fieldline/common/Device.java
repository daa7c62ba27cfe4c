package io.fieldline.common;

import java.util.Objects;

/**
 * A provisioned device.
 *
 * @param id the device id
 * @param name unique, human-chosen name
 * @param type free-form device type ({@code "default"} unless given)
 * @param accessToken the credential a device presents as its MQTT username
 * @param createdTime creation time, epoch milliseconds
 */
public record Device(DeviceId id, String name, String type, String accessToken, long createdTime) {

  public Device {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(accessToken, "accessToken");
  }
}
