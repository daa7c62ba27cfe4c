package io.fieldline.transport.mqtt.connect;

import io.fieldline.transport.mqtt.MqttMetrics.ConnectResult;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import java.util.Locale;

/**
 * Why a CONNECT is refused: the code of the CONNACK that answers it — MQTT 3.1.1 §3.2.2.3 or MQTT 5
 * §3.2.2.2, by the client's version, the MQTT 5 codes being the ones ThingsBoard 4.x sends — and
 * the outcome counted in {@code fieldline.mqtt.connects{result}}. The connection closes after every
 * refusal.
 */
enum ConnectRefusal {
  /** A protocol level other than 3, 4 or 5: 0x01 (in a 3.1.1 CONNACK: the version is unknown). */
  UNACCEPTABLE_PROTOCOL_VERSION(
      MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION,
      MqttConnectReturnCode.CONNECTION_REFUSED_UNSUPPORTED_PROTOCOL_VERSION,
      ConnectResult.UNSUPPORTED_VERSION),
  /** A client id that is too long, or (3.1.1) empty with CleanSession = 0: 0x02 / 0x85. */
  IDENTIFIER_REJECTED(
      MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
      MqttConnectReturnCode.CONNECTION_REFUSED_CLIENT_IDENTIFIER_NOT_VALID,
      ConnectResult.IDENTIFIER_REJECTED),
  /**
   * MQTT 5: a property the protocol forbids (Receive Maximum or Maximum Packet Size 0, Request
   * Problem Information other than 0/1): 0x82.
   */
  PROTOCOL_ERROR(
      MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION,
      MqttConnectReturnCode.CONNECTION_REFUSED_PROTOCOL_ERROR,
      ConnectResult.PROTOCOL_ERROR),
  /**
   * MQTT 5: a CONNECT or Will property other than User Property more than once (§3.1.2.11,
   * §3.1.3.2: a Protocol Error): 0x82.
   */
  REPEATED_PROPERTY(
      MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION,
      MqttConnectReturnCode.CONNECTION_REFUSED_PROTOCOL_ERROR,
      ConnectResult.REPEATED_PROPERTY),
  /** MQTT 5: enhanced authentication is not offered: 0x8C. */
  BAD_AUTHENTICATION_METHOD(
      MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED,
      MqttConnectReturnCode.CONNECTION_REFUSED_BAD_AUTHENTICATION_METHOD,
      ConnectResult.BAD_AUTHENTICATION_METHOD),
  /** The credential lookup failed (storage down and the credential not cached): 0x03 / 0x88. */
  SERVER_UNAVAILABLE(
      MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE,
      MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE_5,
      ConnectResult.SERVER_UNAVAILABLE),
  /**
   * The source address spent its failed-authentication budget ({@code
   * per-address-failed-auth-burst}): refused without a lookup, 0x03 (try again later) / 0x9F
   * (connection rate exceeded).
   */
  AUTH_RATE_LIMITED(
      MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE,
      MqttConnectReturnCode.CONNECTION_REFUSED_CONNECTION_RATE_EXCEEDED,
      ConnectResult.RATE_LIMITED),
  /**
   * Nothing to look up: no user name, no client id credential, no client certificate. 0x04 / 0x86.
   */
  NO_CREDENTIALS(
      MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USER_NAME_OR_PASSWORD,
      MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USERNAME_OR_PASSWORD,
      ConnectResult.BAD_CREDENTIALS),
  /**
   * No device has this access token, basic credential (or password), or client certificate: 0x05 /
   * 0x87.
   */
  UNKNOWN_CREDENTIALS(
      MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED,
      MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED_5,
      ConnectResult.NOT_AUTHORIZED);

  private final MqttConnectReturnCode mqtt3;
  private final MqttConnectReturnCode mqtt5;
  private final ConnectResult result;

  ConnectRefusal(MqttConnectReturnCode mqtt3, MqttConnectReturnCode mqtt5, ConnectResult result) {
    this.mqtt3 = mqtt3;
    this.mqtt5 = mqtt5;
    this.result = result;
  }

  /** The CONNACK code for a client of this version. */
  MqttConnectReturnCode returnCode(boolean v5) {
    return v5 ? mqtt5 : mqtt3;
  }

  ConnectResult result() {
    return result;
  }

  /** For the log and MQTT 5 reason strings: the kind of refusal. */
  String describe() {
    return name().toLowerCase(Locale.ROOT).replace('_', ' ');
  }
}
