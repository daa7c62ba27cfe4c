package io.fieldline.transport.mqtt.session;

import java.util.Locale;

/**
 * Why the server closes a connection. {@link #rejected()} reasons are bad input and are counted in
 * {@code fieldline.mqtt.rejected{reason}}; the others are ordinary lifecycle events.
 */
public enum CloseReason {
  /** Bytes that do not decode as MQTT, or a packet that breaks a decoding rule. */
  MALFORMED("malformed", true),
  /** A packet larger than {@code max-packet-size}. */
  TOO_LARGE("too_large", true),
  /** A packet out of order: PUBLISH before CONNECT, a second CONNECT, a server-only packet. */
  PROTOCOL("protocol", true),
  /** PUBLISH to a topic outside the device API. */
  TOPIC("topic", true),
  /** An invalid payload while {@code invalid-payload = close}. */
  PAYLOAD("payload", true),
  /** More than {@code max-queued-before-connack} packets pipelined behind CONNECT. */
  QUEUE_OVERFLOW("queue_overflow", true),
  /** The server is at {@code max-connections}. */
  CONNECTION_LIMIT("connection_limit", true),
  /** The server is at {@code max-unauthenticated-connections}. */
  UNAUTHENTICATED_LIMIT("unauthenticated_limit", true),
  /** The source address opened connections faster than {@code per-address-connection-rate}. */
  CONNECTION_RATE("connection_rate", true),
  /** CONNECT not received and authenticated within {@code connect-timeout}, however trickled. */
  CONNECT_TIMEOUT("connect_timeout", true),
  /** A client id or user name with U+0000 or ill-formed UTF-8 (MQTT 3.1.1 §1.5.3). */
  BAD_UTF8("bad_utf8", true),
  /** TLS listener: a failed handshake, or bytes that are not TLS. */
  TLS("tls", true),
  /** The client did not read its answers for {@code outbound-stall-timeout}. */
  SLOW_READER("slow_reader", true),
  /** CONNECT refused (bad token, unsupported protocol version, bad client id). */
  CONNECT_REFUSED("connect_refused", false),
  /** Nothing received for 1.5 × keep-alive (MQTT 3.1.1 §3.1.2.10). */
  KEEP_ALIVE_TIMEOUT("keep_alive_timeout", false),
  /** Storing a message failed or timed out: no PUBACK, the device retransmits. */
  WRITE_FAILED("write_failed", false),
  /** A newer connection of the same device took over. */
  TAKEN_OVER("taken_over", false),
  /** The client sent DISCONNECT. */
  CLIENT_DISCONNECT("client_disconnect", false),
  /** The server is shutting down. */
  SHUTDOWN("shutdown", false);

  private final String tag;
  private final boolean rejected;

  CloseReason(String tag, boolean rejected) {
    this.tag = tag;
    this.rejected = rejected;
  }

  /** The metric tag value. */
  public String tag() {
    return tag;
  }

  public boolean rejected() {
    return rejected;
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
