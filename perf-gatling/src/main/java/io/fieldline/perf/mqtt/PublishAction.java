package io.fieldline.perf.mqtt;

import io.fieldline.perf.mqtt.MqttRunStats.Failure;
import io.gatling.commons.validation.Validation;
import io.gatling.core.action.Action;
import io.gatling.core.session.Session;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import scala.Function1;

/**
 * Publishes one message and passes the user on when it is acknowledged: PUBLISH → PUBACK is the
 * response time (QoS 1), KO on ack timeout, on close, or when the user is not connected. The
 * payload is built per message from the connection's next {@link MessageContext}, and told when
 * that message is acknowledged ({@link PayloadFactory#acked}).
 */
final class PublishAction extends MqttAction {

  private final Function1<Session, Validation<String>> topic;
  private final MqttQoS qos;
  private final PayloadFactory payload;

  PublishAction(
      String requestName,
      Action next,
      MqttComponents components,
      Function1<Session, Validation<String>> topic,
      MqttQoS qos,
      PayloadFactory payload) {
    super(requestName, next, components);
    this.topic = topic;
    this.qos = qos;
    this.payload = payload;
  }

  @Override
  protected void send(Session session) {
    long start = clock.nowMillis();
    MqttConnection connection = MqttConnection.of(session);
    if (connection == null) {
      components.protocol().stats().failed(Failure.NOT_CONNECTED);
      ko(session, start, start, "not connected");
      return;
    }
    String resolvedTopic = resolve(topic, session);
    if (resolvedTopic == null) {
      return;
    }
    long sequence = connection.isConnected() ? connection.nextSequence() : -1;
    MessageContext context =
        new MessageContext(
            session.userId(),
            sequence,
            connection.ledger().baseTs() + sequence,
            connection.ledger().username(),
            clock.nowMillis());
    byte[] bytes = sequence < 0 ? new byte[0] : payload.payload(context);
    connection.publish(
        resolvedTopic,
        qos,
        bytes,
        sequence,
        new MqttConnection.AckCallback() {
          @Override
          public void acked(MqttMessage ack, long latencyNanos) {
            long end = clock.nowMillis();
            if (sequence >= 0) {
              payload.acked(context, end);
            }
            ok(session, start, end);
          }

          @Override
          public void failed(Failure failure, String message) {
            ko(session, start, clock.nowMillis(), message);
          }
        });
  }
}
