package io.fieldline.common.profile;

/** How devices may register themselves with a profile's provision key, ThingsBoard's names. */
public enum ProvisionType {
  /** No provisioning: a request with this profile's key is answered {@code NOT_FOUND}. */
  DISABLED,
  /**
   * A request creates a new device with the profile; a name that is already a device's is refused
   * ({@code FAILURE}).
   */
  ALLOW_CREATE_NEW_DEVICES,
  /**
   * Only devices created beforehand with this profile and the requested name are provisioned: the
   * answer is their credential; any other name is refused ({@code FAILURE}).
   */
  CHECK_PRE_PROVISIONED_DEVICES
}
