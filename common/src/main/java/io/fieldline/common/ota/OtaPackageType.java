package io.fieldline.common.ota;

/**
 * What a package updates, ThingsBoard's two kinds. Devices are assigned {@link #FIRMWARE} packages
 * ({@code firmwareId}); {@link #SOFTWARE} packages are stored and listed but not yet assignable.
 */
public enum OtaPackageType {
  FIRMWARE,
  SOFTWARE
}
