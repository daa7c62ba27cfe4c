package io.fieldline.export.sink;

/** A sink definition that cannot be accepted; the message says why, for a 400. */
public final class InvalidSinkException extends Exception {
  private static final long serialVersionUID = 1L;

  public InvalidSinkException(String message) {
    super(message);
  }
}
