package io.fieldline.transport.mqtt.connect;

import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.MqttStrings;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttIdentifierRejectedException;
import io.netty.handler.codec.mqtt.MqttUnacceptableProtocolVersionException;
import io.netty.handler.codec.mqtt.MqttVersion;
import org.jspecify.annotations.Nullable;

/**
 * What a CONNECT must satisfy before its credential is looked up: the rules of MQTT 3.1.1 §3.1 that
 * Netty's decoder leaves to the server, and ours. Each check answers with the {@link
 * ConnectRefusal} to send, or {@code null} to go on. Stateless.
 */
final class ConnectChecks {

  private ConnectChecks() {}

  /**
   * Whether the client id and user name are well-formed UTF-8 without U+0000 (MQTT 3.1.1 §1.5.3:
   * otherwise the server MUST close the connection). Netty's decoder turns ill-formed UTF-8 into
   * U+FFFD, so a U+FFFD in them is taken as ill-formed input.
   */
  static boolean wellFormedStrings(MqttConnectMessage connect) {
    return MqttStrings.isWellFormed(connect.payload().clientIdentifier())
        && (!connect.variableHeader().hasUserName()
            || MqttStrings.isWellFormed(connect.payload().userName()));
  }

  /** The refusal for a CONNECT's client id, or {@code null} if its credential may be looked up. */
  static @Nullable ConnectRefusal refusal(MqttConnectMessage connect, MqttTransportConfig config) {
    String clientId = connect.payload().clientIdentifier();
    if (clientId.length() > config.maxClientIdLength()) {
      // Netty's decoder enforces the maximum for MQTT 3.1 only; 3.1.1 §3.1.3.1 lets the server
      // choose its limit, and max-client-id-length is ours.
      return ConnectRefusal.IDENTIFIER_REJECTED;
    }
    if (clientId.isEmpty()
        && !connect.variableHeader().isCleanSession()
        && connect.variableHeader().version() != MqttVersion.MQTT_5.protocolLevel()) {
      // MQTT 3.1.1 §3.1.3.1: a zero-length client id requires CleanSession = 1 (MQTT 5 assigns
      // one instead, §3.1.3.1).
      return ConnectRefusal.IDENTIFIER_REJECTED;
    }
    return null;
  }

  /**
   * The refusal for a CONNECT the decoder could not accept (unknown protocol level, client id
   * rejected by the MQTT 3.1 rules), or {@code null} if {@code decoderFailure} is something else.
   */
  static @Nullable ConnectRefusal refusal(Throwable decoderFailure) {
    if (decoderFailure instanceof MqttUnacceptableProtocolVersionException) {
      return ConnectRefusal.UNACCEPTABLE_PROTOCOL_VERSION;
    }
    if (decoderFailure instanceof MqttIdentifierRejectedException) {
      return ConnectRefusal.IDENTIFIER_REJECTED;
    }
    return null;
  }
}
