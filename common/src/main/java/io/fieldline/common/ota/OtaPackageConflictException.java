package io.fieldline.common.ota;

/**
 * An OTA package change that contradicts what is stored: a title and version already taken, data
 * uploaded into a package that has some, a package deleted while devices are assigned to it, or
 * assigned while it is being deleted.
 */
public final class OtaPackageConflictException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public OtaPackageConflictException(String message) {
    super(message);
  }
}
