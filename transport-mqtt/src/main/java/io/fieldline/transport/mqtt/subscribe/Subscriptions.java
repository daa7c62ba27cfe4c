package io.fieldline.transport.mqtt.subscribe;

import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SUBSCRIBE/UNSUBSCRIBE path of one connected session: each filter the device API allows
 * ({@link SubscriptionFilters}) is granted and kept in the session's state, so that a
 * CleanSession=0 session still has it after a reconnect; any other filter is refused in the SUBACK.
 * Nothing is delivered on these topics yet (docs/mqtt-api.md).
 *
 * <p>Confined to the channel's event loop.
 */
public final class Subscriptions {

  private static final Logger LOG = LoggerFactory.getLogger(Subscriptions.class);

  private final Connection connection;
  private final SessionState session;

  /** The subscriptions of the session held by {@code connection}. */
  public Subscriptions(Connection connection, SessionState session) {
    this.connection = connection;
    this.session = session;
  }

  /** A SUBSCRIBE: one SUBACK with a return code per filter, in order (MQTT 3.1.1 §3.9). */
  public void onSubscribe(MqttSubscribeMessage subscribe) {
    List<MqttQoS> granted = new ArrayList<>();
    for (MqttTopicSubscription subscription : subscribe.payload().topicSubscriptions()) {
      String filter = subscription.topicFilter();
      if (SubscriptionFilters.isAllowed(filter)) {
        MqttQoS qos = SubscriptionFilters.grantedQos(subscription.qualityOfService());
        session.subscriptions().put(filter, qos.value());
        granted.add(qos);
      } else {
        LOG.debug("{} subscription refused: {}", connection.logPrefix(), LogSafe.text(filter));
        granted.add(MqttQoS.FAILURE); // MQTT 3.1.1 §3.9.3: return code 0x80
      }
    }
    connection
        .ctx()
        .writeAndFlush(
            MqttMessageBuilders.subAck()
                .packetId(subscribe.variableHeader().messageId())
                .addGrantedQoses(granted.toArray(new MqttQoS[0]))
                .build());
  }

  /** An UNSUBSCRIBE: the filters are dropped from the session and UNSUBACK sent (§3.10). */
  public void onUnsubscribe(MqttUnsubscribeMessage unsubscribe) {
    for (String filter : unsubscribe.payload().topics()) {
      session.subscriptions().remove(filter);
    }
    connection
        .ctx()
        .writeAndFlush(
            MqttMessageBuilders.unsubAck()
                .packetId(unsubscribe.variableHeader().messageId())
                .build());
  }
}
