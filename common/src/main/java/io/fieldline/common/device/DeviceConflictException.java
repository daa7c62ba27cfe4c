package io.fieldline.common.device;

/** A device name or credential (access token, MQTT login, certificate) is already in use. */
public final class DeviceConflictException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public DeviceConflictException(String message) {
    super(message);
  }
}
