package io.fieldline.common.rpc;

/**
 * Where a session reports what became of a server-side RPC it took ({@link
 * io.fieldline.common.events.DeviceEvent.RpcRequested}). The caller may be on another node: the
 * cluster carries each call back. Implementations are thread-safe, never block, and ignore anything
 * after the call's outcome is settled (a second session's late answer, a duplicate).
 */
public interface RpcCallback {

  /**
   * The request is on its way to the device: the PUBLISH was written (QoS 0) — status SENT. For a
   * QoS 1 subscription, {@link #delivered()} follows once the device acknowledged it.
   */
  void sent();

  /** The device acknowledged the request (QoS 1 PUBACK), or it was written at QoS 0: DELIVERED. */
  void delivered();

  /** The device answered on {@code v1/devices/me/rpc/response/{n}}; {@code body} is the payload. */
  void responded(String body);

  /**
   * The session gave the request up before it was delivered (closed, the request too large for the
   * client, the session's outbound queue full): it may be offered again.
   *
   * @param reason a short explanation, for logs and the persistent request's record
   */
  void undelivered(String reason);
}
