package io.fieldline.transport.mqtt.session;

/**
 * What CONNECT and CONNACK settled for one connection: its protocol version and, for MQTT 5, the
 * limits each side announced. Immutable; an MQTT 3.1.1 connection has {@link #MQTT_3}.
 *
 * @param mqtt5 whether the connection speaks MQTT 5 (reason codes and properties on the wire)
 * @param receiveMaximum unacknowledged QoS 1/2 PUBLISHes the client may have in flight (MQTT 5
 *     §3.2.2.3.3, announced in CONNACK); exceeding it ends the connection with DISCONNECT 0x93
 * @param topicAliasMaximum inbound topic aliases the client may define (§3.2.2.3.8)
 * @param clientReceiveMaximum QoS 1/2 PUBLISHes the server may have unacknowledged at the client
 *     (the client's Receive Maximum, §3.1.2.11.3; 65535 when absent and for MQTT 3.1.1)
 * @param clientMaximumPacketSize the largest packet the client accepts (§3.1.2.11.4): a packet the
 *     server would send beyond it is not sent (a reason string is dropped first)
 * @param problemInformation whether the client accepts reason strings on PUBACK, SUBACK and the
 *     like (Request Problem Information, §3.1.2.11.7)
 */
public record Negotiated(
    boolean mqtt5,
    int receiveMaximum,
    int topicAliasMaximum,
    int clientReceiveMaximum,
    long clientMaximumPacketSize,
    boolean problemInformation) {

  /** MQTT 3.1 and 3.1.1: no properties, no reason codes beyond CONNACK's and SUBACK's. */
  public static final Negotiated MQTT_3 =
      new Negotiated(false, 65535, 0, 65535, Long.MAX_VALUE, false);

  /** Whether a packet of {@code size} bytes (fixed header included) may be sent to the client. */
  public boolean clientAccepts(long size) {
    return size <= clientMaximumPacketSize;
  }
}
