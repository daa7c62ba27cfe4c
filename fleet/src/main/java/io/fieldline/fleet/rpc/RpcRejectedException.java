package io.fieldline.fleet.rpc;

/** A call refused before it started because too many are waiting (HTTP 429). */
public final class RpcRejectedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public RpcRejectedException(String message) {
    super(message);
  }
}
