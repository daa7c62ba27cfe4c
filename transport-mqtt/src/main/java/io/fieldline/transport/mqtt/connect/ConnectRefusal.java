package io.fieldline.transport.mqtt.connect;

import io.fieldline.transport.mqtt.MqttMetrics.ConnectResult;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;

/**
 * Why a CONNECT is refused: the return code of the CONNACK that answers it (MQTT 3.1.1 §3.2.2.3)
 * and the outcome counted in {@code fieldline.mqtt.connects{result}}. The connection closes after
 * every refusal.
 */
enum ConnectRefusal {
  /** A protocol level other than 3 (MQTT 3.1) or 4 (MQTT 3.1.1): 0x01. */
  UNACCEPTABLE_PROTOCOL_VERSION(
      MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION,
      ConnectResult.UNSUPPORTED_VERSION),
  /**
   * MQTT 5, until it is implemented: reason code 0x84. The decoder recorded the version, so the
   * encoder writes an MQTT 5 CONNACK that v5 clients read cleanly.
   */
  MQTT5_NOT_SUPPORTED(
      MqttConnectReturnCode.CONNECTION_REFUSED_UNSUPPORTED_PROTOCOL_VERSION,
      ConnectResult.UNSUPPORTED_VERSION),
  /** A client id that is too long, or empty with CleanSession = 0: 0x02. */
  IDENTIFIER_REJECTED(
      MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
      ConnectResult.IDENTIFIER_REJECTED),
  /** The token lookup failed (storage down and the token not cached): 0x03. */
  SERVER_UNAVAILABLE(
      MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE,
      ConnectResult.SERVER_UNAVAILABLE),
  /**
   * The source address spent its failed-authentication budget ({@code
   * per-address-failed-auth-burst}): refused without a lookup, 0x03 (try again later).
   */
  AUTH_RATE_LIMITED(
      MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE, ConnectResult.RATE_LIMITED),
  /** No user name, or an empty one: there is no access token to look up. 0x04. */
  NO_TOKEN(
      MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USER_NAME_OR_PASSWORD,
      ConnectResult.BAD_CREDENTIALS),
  /** No device has this access token: 0x05. */
  UNKNOWN_TOKEN(
      MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED, ConnectResult.NOT_AUTHORIZED);

  private final MqttConnectReturnCode returnCode;
  private final ConnectResult result;

  ConnectRefusal(MqttConnectReturnCode returnCode, ConnectResult result) {
    this.returnCode = returnCode;
    this.result = result;
  }

  MqttConnectReturnCode returnCode() {
    return returnCode;
  }

  ConnectResult result() {
    return result;
  }

  /** For the log: the kind of refusal and its return code. */
  String describe() {
    return name().toLowerCase(java.util.Locale.ROOT) + " (" + returnCode + ")";
  }
}
