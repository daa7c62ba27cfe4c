package io.fieldline.transport.mqtt.connect;

import io.netty.handler.codec.mqtt.MqttConnectMessage;

/**
 * ThingsBoard's provisioning login: a CONNECT whose user name or client id is {@value #NAME} opens
 * a provisioning session instead of a device's (whatever the password; as ThingsBoard, this wins
 * over a device credential with that user name or client id). Offered only when the transport was
 * given a provisioning service ({@code DeviceServices.provisioning()}). Stateless.
 */
final class ProvisionLogin {

  /** The user name or client id of a provisioning session. */
  static final String NAME = "provision";

  private ProvisionLogin() {}

  /** Whether {@code connect} asks for a provisioning session. */
  static boolean requested(MqttConnectMessage connect) {
    return NAME.equals(connect.payload().clientIdentifier())
        || (connect.variableHeader().hasUserName() && NAME.equals(connect.payload().userName()));
  }
}
