package io.fieldline.fleet.rpc;

import java.util.Objects;

/** How a lightweight server-side RPC ended, as its REST call answers it. */
public sealed interface RpcOutcome {

  /** A one-way request reached the device (written at QoS 0, acknowledged at QoS 1). */
  record Delivered() implements RpcOutcome {}

  /**
   * A two-way request was answered.
   *
   * @param body the device's payload on {@code v1/devices/me/rpc/response/{n}}, as text
   */
  record Responded(String body) implements RpcOutcome {
    public Responded {
      Objects.requireNonNull(body, "body");
    }
  }

  /** Its time ran out: no session took it, or the device did not acknowledge or answer in time. */
  record TimedOut() implements RpcOutcome {}

  /** The node is shutting down. */
  record Stopped() implements RpcOutcome {}
}
