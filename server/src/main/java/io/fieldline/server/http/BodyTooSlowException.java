package io.fieldline.server.http;

/**
 * A request body did not arrive at the listener's minimum rate ({@code
 * fieldline.http.body-read-timeout}, {@code min-body-rate}); answered 408 and the connection
 * closed.
 */
public final class BodyTooSlowException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  BodyTooSlowException() {
    super("request body too slow", null, false, false);
  }
}
