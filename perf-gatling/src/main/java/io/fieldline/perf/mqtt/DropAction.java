package io.fieldline.perf.mqtt;

import io.gatling.core.action.Action;
import io.gatling.core.session.Session;

/**
 * Closes the user's socket without DISCONNECT and remembers when, so that the user's next connect
 * can tell how long the device took to publish again; not reported as a request.
 */
final class DropAction extends MqttAction {

  DropAction(String requestName, Action next, MqttComponents components) {
    super(requestName, next, components);
  }

  @Override
  protected void send(Session session) {
    MqttConnection connection = MqttConnection.of(session);
    Session next = session.remove(MqttConnection.ATTRIBUTE);
    if (connection != null) {
      connection.drop();
      next = next.set(MqttConnection.DROPPED_AT, System.currentTimeMillis());
    }
    this.next.$bang(next);
  }
}
