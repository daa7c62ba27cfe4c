package io.fieldline.transport.mqtt.session;

/**
 * Why the server is not reading a connection's socket. Reading ({@code autoRead}) stops when the
 * first reason is set and resumes when the last one is cleared (see {@link Connection#pause}).
 */
public enum Pause {
  /** The access token is being looked up: nothing beyond CONNECT is read until CONNACK. */
  AUTH,
  /**
   * The connection's in-flight window is at {@code max-inflight}; cleared at the low-water mark.
   */
  WINDOW,
  /** The storage layer's pressure gauge is overloaded (every connection pauses). */
  STORAGE,
  /**
   * More than {@code outbound-high-water} bytes are queued for the socket (the client is not
   * reading its answers); cleared at {@code outbound-low-water}, or the connection closes after
   * {@code outbound-stall-timeout}.
   */
  OUTBOUND,
  /** The client sent client-side RPC requests faster than {@code client-rpc-rate}. */
  RPC_RATE,
  /** The client sent attribute requests faster than {@code attribute-request-rate}. */
  ATTRIBUTE_RATE,
  /** The client has {@code attribute-request-burst} attribute reads running. */
  ATTRIBUTE_READS,
  /** The client sent firmware chunk requests faster than {@code firmware.request-rate}. */
  FIRMWARE_RATE,
  /** The client has {@code firmware.max-reads} firmware chunk reads running. */
  FIRMWARE_READS,
  /**
   * A gateway session waits for its turn to create children ({@code
   * gateway.max-concurrent-creations} run on the node).
   */
  GATEWAY_CREATIONS,
  /**
   * A write failed: the connection takes no new work and closes once earlier PUBLISHes are acked.
   */
  FAILING
}
