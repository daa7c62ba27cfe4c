package io.fieldline.transport.mqtt.connect;

import io.netty.handler.codec.mqtt.MqttProperties;
import org.jspecify.annotations.Nullable;

/**
 * The MQTT 5 CONNECT properties Fieldline acts on (MQTT 5 §3.1.2.11), read once and checked. The
 * others — Request Response Information, User Properties and the client's Topic Alias Maximum (the
 * server never uses aliases) — are accepted and ignored. Immutable.
 *
 * @param sessionExpirySeconds how long the client asks its session to outlive the connection; 0
 *     when absent, {@code 0xFFFFFFFF} (never) as a large positive number
 * @param receiveMaximum QoS 1/2 PUBLISHes the client accepts unacknowledged; 65535 when absent
 * @param maximumPacketSize the largest packet the client accepts; unlimited when absent
 * @param problemInformation whether the client accepts reason strings (absent = yes)
 * @param authenticationMethod the enhanced authentication asked for, or null
 */
record ConnectProperties(
    long sessionExpirySeconds,
    int receiveMaximum,
    long maximumPacketSize,
    boolean problemInformation,
    @Nullable String authenticationMethod) {

  /** What an MQTT 3.1.1 CONNECT amounts to. */
  static final ConnectProperties NONE =
      new ConnectProperties(0, 65535, Long.MAX_VALUE, false, null);

  /**
   * Reads the properties of a CONNECT.
   *
   * @return them, or null if one has a value the protocol forbids (a Protocol Error, §3.1.2.11:
   *     Receive Maximum 0, Maximum Packet Size 0, Request Problem Information other than 0 or 1)
   */
  static @Nullable ConnectProperties read(MqttProperties properties) {
    long expiry = unsigned(properties, MqttProperties.SESSION_EXPIRY_INTERVAL, 0);
    long receiveMaximum = unsigned(properties, MqttProperties.RECEIVE_MAXIMUM, 65535);
    long maximumPacketSize =
        unsigned(properties, MqttProperties.MAXIMUM_PACKET_SIZE, Long.MAX_VALUE);
    long problemInformation = unsigned(properties, MqttProperties.REQUEST_PROBLEM_INFORMATION, 1);
    if (receiveMaximum == 0 || maximumPacketSize == 0 || problemInformation > 1) {
      return null;
    }
    MqttProperties.MqttProperty<?> method =
        properties.getProperty(MqttProperties.AUTHENTICATION_METHOD);
    return new ConnectProperties(
        expiry,
        (int) Math.min(receiveMaximum, 65535),
        maximumPacketSize,
        problemInformation == 1,
        method == null ? null : String.valueOf(method.value()));
  }

  // Integer properties arrive as Java ints: a four-byte value above 2^31 - 1 is negative.
  private static long unsigned(MqttProperties properties, int type, long absent) {
    MqttProperties.MqttProperty<?> property = properties.getProperty(type);
    if (property == null || !(property.value() instanceof Integer value)) {
      return absent;
    }
    return Integer.toUnsignedLong(value);
  }
}
