package io.fieldline.common.provision;

/** The {@code status} of a provisioning answer, ThingsBoard's names. */
public enum ProvisionStatus {
  /** The device is provisioned: the answer carries its credential. */
  SUCCESS,
  /**
   * No profile provisions with this key and secret (unknown key, wrong secret, provisioning
   * disabled, key or secret missing).
   */
  NOT_FOUND,
  /**
   * Key and secret are right, but the device cannot be provisioned (its name is taken, it was not
   * pre-provisioned, its credential is invalid or taken), or the request itself was refused (not
   * JSON, too large, too many requests, storage unavailable).
   */
  FAILURE
}
