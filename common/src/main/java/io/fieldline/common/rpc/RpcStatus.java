package io.fieldline.common.rpc;

/**
 * The life of a persistent server-side RPC, as ThingsBoard names it. {@code QUEUED → SENT →
 * DELIVERED → SUCCESSFUL}, or one of the ends {@code TIMEOUT} (sent, no answer in time and no
 * retries left), {@code EXPIRED} (not delivered before its expiration time), {@code FAILED} (the
 * device is gone or the request could not be delivered at all).
 */
public enum RpcStatus {
  QUEUED,
  SENT,
  DELIVERED,
  SUCCESSFUL,
  TIMEOUT,
  EXPIRED,
  FAILED;

  /** Whether nothing more happens to a request in this status. */
  public boolean isFinal() {
    return this == SUCCESSFUL || this == TIMEOUT || this == EXPIRED || this == FAILED;
  }
}
