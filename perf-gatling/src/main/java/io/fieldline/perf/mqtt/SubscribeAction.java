package io.fieldline.perf.mqtt;

import io.fieldline.perf.mqtt.MqttRunStats.Failure;
import io.gatling.commons.validation.Validation;
import io.gatling.core.action.Action;
import io.gatling.core.session.Session;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import org.jspecify.annotations.Nullable;
import scala.Function1;

/**
 * Subscribes to one topic filter; SUBSCRIBE → SUBACK, KO when the broker answers 0x80. For {@code
 * respondToRpc()} it first installs the {@link RpcResponder} on the connection (answers at QoS
 * {@code rpcAnswerQos}), so that no request arriving right after the SUBACK goes unanswered.
 */
final class SubscribeAction extends MqttAction {

  /** MQTT 3.1.1 §3.9.3: SUBACK return code 0x80 means the subscription was refused. */
  private static final int REFUSED = 0x80;

  private final Function1<Session, Validation<String>> topicFilter;
  private final MqttQoS qos;
  private final @Nullable MqttQoS rpcAnswerQos;

  SubscribeAction(
      String requestName,
      Action next,
      MqttComponents components,
      Function1<Session, Validation<String>> topicFilter,
      MqttQoS qos,
      @Nullable MqttQoS rpcAnswerQos) {
    super(requestName, next, components);
    this.topicFilter = topicFilter;
    this.qos = qos;
    this.rpcAnswerQos = rpcAnswerQos;
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
    String filter = resolve(topicFilter, session);
    if (filter == null) {
      return;
    }
    if (rpcAnswerQos != null) {
      connection.respondToRpc(rpcAnswerQos);
    }
    connection.subscribe(
        filter,
        qos,
        new MqttConnection.AckCallback() {
          @Override
          public void acked(MqttMessage ack, long latencyNanos) {
            boolean refused =
                ack instanceof MqttSubAckMessage subAck
                    && subAck.payload().grantedQoSLevels().contains(REFUSED);
            if (refused) {
              components.protocol().stats().failed(Failure.REFUSED);
              ko(session, start, clock.nowMillis(), "SUBACK 0x80 for " + filter);
            } else {
              ok(session, start, clock.nowMillis());
            }
          }

          @Override
          public void failed(Failure failure, String message) {
            ko(session, start, clock.nowMillis(), message);
          }
        });
  }
}
