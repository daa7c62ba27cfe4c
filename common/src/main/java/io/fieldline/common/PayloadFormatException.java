package io.fieldline.common;

/** A device payload is not valid JSON or does not have one of the accepted shapes. */
public final class PayloadFormatException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public PayloadFormatException(String message) {
    super(message);
  }

  public PayloadFormatException(String message, Throwable cause) {
    super(message, cause);
  }
}
