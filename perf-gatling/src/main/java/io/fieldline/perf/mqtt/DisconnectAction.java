package io.fieldline.perf.mqtt;

import io.gatling.core.action.Action;
import io.gatling.core.session.Session;

/** Sends DISCONNECT and closes the user's connection; not reported as a request. */
final class DisconnectAction extends MqttAction {

  DisconnectAction(String requestName, Action next, MqttComponents components) {
    super(requestName, next, components);
  }

  @Override
  protected void send(Session session) {
    MqttConnection connection = MqttConnection.of(session);
    if (connection != null) {
      connection.disconnect();
    }
    next.$bang(session.remove(MqttConnection.ATTRIBUTE));
  }
}
