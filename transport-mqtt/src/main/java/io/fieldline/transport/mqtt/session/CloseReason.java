package io.fieldline.transport.mqtt.session;

import java.util.Locale;

/**
 * Why the server closes a connection. {@link #rejected()} reasons are bad input and are counted in
 * {@code fieldline.mqtt.rejected{reason}}; the others are ordinary lifecycle events.
 */
public enum CloseReason {
  // The third argument is the MQTT 5 DISCONNECT reason code, or NONE (see disconnectCode()).
  /** Bytes that do not decode as MQTT, or a packet that breaks a decoding rule. */
  MALFORMED("malformed", true, 0x81),
  /** A packet larger than {@code max-packet-size}. */
  TOO_LARGE("too_large", true, 0x95),
  /** A packet out of order: PUBLISH before CONNECT, a second CONNECT, a server-only packet. */
  PROTOCOL("protocol", true, 0x82),
  /** PUBLISH to a topic outside the device API. */
  TOPIC("topic", true, 0x90),
  /** An invalid payload while {@code invalid-payload = close}. */
  PAYLOAD("payload", true, 0x99),
  /** More than {@code max-queued-before-connack} packets pipelined behind CONNECT. */
  QUEUE_OVERFLOW("queue_overflow", true, Codes.NONE),
  /** MQTT 5: more unacknowledged QoS 1/2 PUBLISHes than the Receive Maximum granted in CONNACK. */
  RECEIVE_MAXIMUM("receive_maximum", true, 0x93),
  /** MQTT 5: a topic alias of 0 or above the Topic Alias Maximum, or one never defined. */
  TOPIC_ALIAS("topic_alias", true, 0x94),
  /** MQTT 5: a PUBLISH whose Response Topic is empty or holds a wildcard (§3.3.2.3.5). */
  RESPONSE_TOPIC("response_topic", true, 0x82),
  /** MQTT 5: a SUBSCRIBE with a Subscription Identifier, which CONNACK said is not supported. */
  SUBSCRIPTION_IDENTIFIER("subscription_identifier", true, 0xA1),
  /** The server is at {@code max-connections}. */
  CONNECTION_LIMIT("connection_limit", true, Codes.NONE),
  /** The server is at {@code max-unauthenticated-connections}. */
  UNAUTHENTICATED_LIMIT("unauthenticated_limit", true, Codes.NONE),
  /** The source address opened connections faster than {@code per-address-connection-rate}. */
  CONNECTION_RATE("connection_rate", true, Codes.NONE),
  /** CONNECT not received and authenticated within {@code connect-timeout}, however trickled. */
  CONNECT_TIMEOUT("connect_timeout", true, Codes.NONE),
  /** A client id or user name with U+0000 or ill-formed UTF-8 (MQTT 3.1.1 §1.5.3). */
  BAD_UTF8("bad_utf8", true, 0x81),
  /** TLS listener: a failed handshake, or bytes that are not TLS. */
  TLS("tls", true, Codes.NONE),
  /** The client did not read its answers for {@code outbound-stall-timeout}. */
  SLOW_READER("slow_reader", true, Codes.NONE),
  /** CONNECT refused (bad token, unsupported protocol version, bad client id). */
  CONNECT_REFUSED("connect_refused", false, Codes.NONE),
  /** Nothing received for 1.5 × keep-alive (MQTT 3.1.1 §3.1.2.10). */
  KEEP_ALIVE_TIMEOUT("keep_alive_timeout", false, 0x8D),
  /** Storing a message failed or timed out: no PUBACK, the device retransmits. */
  WRITE_FAILED("write_failed", false, 0x89),
  /** A newer connection of the same device took over. */
  TAKEN_OVER("taken_over", false, 0x8E),
  /** The device's credential was replaced or the device deleted (on any node): 0x87. */
  CREDENTIALS_REVOKED("credentials_revoked", false, 0x87),
  /** The client sent DISCONNECT. */
  CLIENT_DISCONNECT("client_disconnect", false, Codes.NONE),
  /** The server is shutting down. */
  SHUTDOWN("shutdown", false, 0x8B);

  private final String tag;
  private final boolean rejected;
  private final int disconnectCode;

  // Holds the "no DISCONNECT" marker: an enum's own constants cannot refer to its static fields.
  private static final class Codes {
    static final int NONE = -1;
  }

  CloseReason(String tag, boolean rejected, int disconnectCode) {
    this.tag = tag;
    this.rejected = rejected;
    this.disconnectCode = disconnectCode;
  }

  /** The metric tag value. */
  public String tag() {
    return tag;
  }

  public boolean rejected() {
    return rejected;
  }

  /**
   * The reason code of the DISCONNECT sent to a connected MQTT 5 client before the server closes
   * its connection for this reason (MQTT 5 §3.14.2.1), or -1 when none is sent: before CONNACK (the
   * spec forbids it), when the client disconnected itself, or when it does not read (a slow reader
   * would not read it either).
   */
  public int disconnectCode() {
    return disconnectCode;
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
