package io.fieldline.transport.mqtt.subscribe;

import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.DownlinkTopics;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.MqttStrings;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubAckPayload;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SUBSCRIBE/UNSUBSCRIBE path of one connected session: each filter the device API allows
 * ({@link SubscriptionFilters}) is granted and kept in the session's state, so that a
 * CleanSession=0 session still has it after a reconnect; any other filter is refused in the SUBACK.
 * The downlink reads the granted filters (and their QoS) when it decides what to send; a granted
 * {@code v1/devices/me/rpc/request/+} is announced once the SUBACK is written, so that server-side
 * RPC requests waiting for the device are offered again.
 *
 * <p>Confined to the channel's event loop.
 */
public final class Subscriptions {

  private static final Logger LOG = LoggerFactory.getLogger(Subscriptions.class);

  // MQTT 5 reason codes (§3.9.3, §3.11.3).
  private static final int TOPIC_FILTER_INVALID = 0x8F;
  private static final int SHARED_SUBSCRIPTIONS_NOT_SUPPORTED = 0x9E;
  private static final short SUCCESS = 0x00;
  private static final short NO_SUBSCRIPTION_EXISTED = 0x11;
  private static final String SHARED_PREFIX = "$share/";

  private final Connection connection;
  private final SessionState session;
  private final Downlink downlink;

  /** The subscriptions of the session held by {@code connection}. */
  public Subscriptions(Connection connection, SessionState session, Downlink downlink) {
    this.connection = connection;
    this.session = session;
    this.downlink = downlink;
  }

  /**
   * A SUBSCRIBE: one SUBACK with a code per filter, in order (MQTT 3.1.1 §3.9, MQTT 5 §3.9): the
   * granted QoS, or a refusal — 0x80 for MQTT 3.1.1; for MQTT 5 0x9E for a shared subscription and
   * 0x8F (topic filter invalid) for any filter outside the device API.
   */
  public void onSubscribe(MqttSubscribeMessage subscribe) {
    boolean v5 = connection.negotiated().mqtt5();
    MqttMessageIdAndPropertiesVariableHeader header = subscribe.idAndPropertiesVariableHeader();
    if (v5 && header.properties().getProperty(MqttProperties.SUBSCRIPTION_IDENTIFIER) != null) {
      // MQTT 5 §3.8.2.1.2: CONNACK said Subscription Identifiers are not available.
      connection.reject(CloseReason.SUBSCRIPTION_IDENTIFIER, "SUBSCRIBE with a subscription id");
      return;
    }
    List<MqttTopicSubscription> requested = subscribe.payload().topicSubscriptions();
    for (MqttTopicSubscription subscription : requested) {
      if (!MqttStrings.isWellFormed(subscription.topicFilter())) {
        connection.reject(CloseReason.BAD_UTF8, "topic filter with U+0000 or bad UTF-8");
        return;
      }
    }
    int[] codes = new int[requested.size()];
    boolean rpc = false;
    for (int i = 0; i < codes.length; i++) {
      MqttTopicSubscription subscription = requested.get(i);
      String filter = subscription.topicFilter();
      if (SubscriptionFilters.isAllowed(filter)) {
        MqttQoS qos = SubscriptionFilters.grantedQos(subscription.qualityOfService());
        session.subscriptions().put(filter, qos.value());
        codes[i] = qos.value();
        rpc |=
            DownlinkTopics.RPC_REQUEST_FILTER.equals(filter)
                || DownlinkTopics.GATEWAY_RPC.equals(filter);
      } else {
        LOG.debug("{} subscription refused: {}", connection.logPrefix(), LogSafe.text(filter));
        codes[i] =
            !v5
                ? MqttQoS.FAILURE.value() // MQTT 3.1.1 §3.9.3: 0x80
                : filter.startsWith(SHARED_PREFIX)
                    ? SHARED_SUBSCRIPTIONS_NOT_SUPPORTED
                    : TOPIC_FILTER_INVALID;
      }
    }
    connection
        .ctx()
        .writeAndFlush(
            new MqttSubAckMessage(
                new MqttFixedHeader(MqttMessageType.SUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
                new MqttMessageIdAndPropertiesVariableHeader(
                    header.messageId(), MqttProperties.NO_PROPERTIES),
                new MqttSubAckPayload(codes)));
    if (rpc) {
      downlink.rpcSubscribed();
    }
  }

  /**
   * An UNSUBSCRIBE: the filters are dropped from the session and UNSUBACK sent (MQTT 3.1.1 §3.10;
   * MQTT 5 §3.11: a reason code per filter, 0x00 or 0x11 for a filter that was not subscribed).
   */
  public void onUnsubscribe(MqttUnsubscribeMessage unsubscribe) {
    MqttMessageBuilders.UnsubAckBuilder unsubAck =
        MqttMessageBuilders.unsubAck().packetId(unsubscribe.variableHeader().messageId());
    boolean v5 = connection.negotiated().mqtt5();
    for (String filter : unsubscribe.payload().topics()) {
      boolean existed = session.subscriptions().remove(filter) != null;
      if (v5) {
        unsubAck.addReasonCode(existed ? SUCCESS : NO_SUBSCRIPTION_EXISTED);
      }
    }
    connection.ctx().writeAndFlush(unsubAck.build());
  }
}
