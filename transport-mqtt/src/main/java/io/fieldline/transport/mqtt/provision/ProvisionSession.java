package io.fieldline.transport.mqtt.provision;

import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.common.provision.ProvisionResponse;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.MqttStrings;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttSubAckPayload;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provisioning session (ThingsBoard's "provision-only" session), after its CONNACK:
 *
 * <ul>
 *   <li>SUBSCRIBE: {@value #RESPONSE_TOPIC} is granted (QoS 0 or 1), any other filter refused
 *       (0x80; MQTT 5: 0x8F); UNSUBSCRIBE is answered;
 *   <li>PUBLISH to {@value #REQUEST_TOPIC} (QoS 0, 1 or 2): the payload goes to the provisioning
 *       port with the client's address; when the answer is there the request is acknowledged
 *       (PUBACK, or PUBREC at once for QoS 2), the answer published on {@value #RESPONSE_TOPIC}
 *       (with the QoS the client subscribed with, QoS 0 without a subscription, as ThingsBoard
 *       writes it either way); the client is expected to disconnect then, and the server closes the
 *       connection {@code linger} after the answer if it has not;
 *   <li>a PUBLISH to any other topic closes the connection ({@link CloseReason#TOPIC}; MQTT 5:
 *       DISCONNECT 0x90), and so does a second request ({@link CloseReason#PROTOCOL});
 *   <li>the request must arrive within {@code requestTimeout} of CONNACK, or the connection closes
 *       ({@link CloseReason#CONNECT_TIMEOUT}).
 * </ul>
 *
 * Each refusal is counted by the transport's {@code fieldline.mqtt.rejected{reason}} and logged
 * rate-limited ({@link Connection#reject}). Confined to the channel's event loop.
 */
public final class ProvisionSession {

  /** Where a provisioning request is published. */
  public static final String REQUEST_TOPIC = "/provision/request";

  /** Where the answer is published. */
  public static final String RESPONSE_TOPIC = "/provision/response";

  private static final Logger LOG = LoggerFactory.getLogger(ProvisionSession.class);
  // MQTT 5 reason codes (§3.9.3, §3.11.3).
  private static final int TOPIC_FILTER_INVALID = 0x8F;
  private static final short SUCCESS = 0x00;
  private static final short NO_SUBSCRIPTION_EXISTED = 0x11;
  private static final int RESPONSE_PACKET_ID = 1;

  private enum Step {
    /** Waiting for the request. */
    WAITING,
    /** The request is with the provisioning port. */
    PROVISIONING,
    /**
     * The answer is written; the connection closes when the client ends it, or after the linger.
     */
    ANSWERED
  }

  private final Connection connection;
  private final DeviceProvisioning provisioning;
  private final Duration requestTimeout;
  private final Duration linger;
  private Step step = Step.WAITING;
  // The QoS the client subscribed to the answer with; -1 while it has not subscribed.
  private int responseQos = -1;
  private @Nullable ScheduledFuture<?> deadline;

  /**
   * @param requestTimeout how long after CONNACK the request may take to arrive
   * @param linger how long after the answer the connection is closed if the client has not closed
   *     it
   */
  public ProvisionSession(
      Connection connection,
      DeviceProvisioning provisioning,
      Duration requestTimeout,
      Duration linger) {
    this.connection = connection;
    this.provisioning = provisioning;
    this.requestTimeout = requestTimeout;
    this.linger = linger;
  }

  /** CONNACK is written: the request deadline starts. */
  public void start() {
    assert connection.ctx().executor().inEventLoop();
    deadline =
        connection
            .ctx()
            .executor()
            .schedule(
                () -> {
                  if (step == Step.WAITING) {
                    connection.reject(
                        CloseReason.CONNECT_TIMEOUT,
                        "no provisioning request within {}",
                        requestTimeout);
                  }
                },
                requestTimeout.toNanos(),
                TimeUnit.NANOSECONDS);
  }

  /** A PUBLISH: the request, or a reason to close. */
  public void onPublish(MqttPublishMessage publish) {
    String topic = publish.variableHeader().topicName();
    if (!REQUEST_TOPIC.equals(topic)) {
      connection.reject(CloseReason.TOPIC, "PUBLISH to {} on a provisioning session", topic);
      return;
    }
    if (step != Step.WAITING) {
      connection.reject(CloseReason.PROTOCOL, "a second provisioning request");
      return;
    }
    step = Step.PROVISIONING;
    cancelDeadline();
    MqttQoS qos = publish.fixedHeader().qosLevel();
    int packetId = publish.variableHeader().packetId();
    if (qos == MqttQoS.EXACTLY_ONCE) {
      // MQTT 3.1.1 §4.3.3: the request is taken; PUBREL → PUBCOMP follows.
      connection.ctx().writeAndFlush(reply(MqttMessageType.PUBREC, packetId));
    }
    byte[] payload = ByteBufUtil.getBytes(publish.payload());
    LOG.debug("{} provisioning request of {} bytes", connection.logPrefix(), payload.length);
    provisioning
        .provision(payload, address(connection.ctx().channel().remoteAddress()))
        .whenCompleteAsync(
            (response, error) ->
                answer(
                    qos,
                    packetId,
                    error == null && response != null ? response : ProvisionResponse.failed()),
            connection.ctx().channel().eventLoop());
  }

  private void answer(MqttQoS qos, int packetId, ProvisionResponse response) {
    if (connection.state() == Connection.State.CLOSED) {
      return;
    }
    step = Step.ANSWERED;
    if (qos == MqttQoS.AT_LEAST_ONCE) {
      connection.ctx().write(reply(MqttMessageType.PUBACK, packetId));
    }
    MqttQoS answerQos = responseQos == 1 ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE;
    MqttPublishMessage answer =
        new MqttPublishMessage(
            new MqttFixedHeader(MqttMessageType.PUBLISH, false, answerQos, false, 0),
            new MqttPublishVariableHeader(
                RESPONSE_TOPIC,
                answerQos == MqttQoS.AT_LEAST_ONCE ? RESPONSE_PACKET_ID : -1,
                MqttProperties.NO_PROPERTIES),
            Unpooled.wrappedBuffer(response.toJson()));
    LOG.debug("{} provisioning answered {}", connection.logPrefix(), response.status());
    connection.ctx().writeAndFlush(answer);
    // ThingsBoard closes a provisioning session a while after it answered (60 s): a client that
    // closes at once races its own reading of the answer (HiveMQ's client drops what it has not
    // handed out when the connection ends). Clients disconnect once they have read it; those that
    // do not are closed after the linger.
    deadline =
        connection
            .ctx()
            .executor()
            .schedule(
                () -> connection.close(CloseReason.CLIENT_DISCONNECT),
                linger.toNanos(),
                TimeUnit.NANOSECONDS);
  }

  /**
   * A SUBSCRIBE: only {@value #RESPONSE_TOPIC}, granted at most QoS 1; any other filter is refused.
   */
  public void onSubscribe(MqttSubscribeMessage subscribe) {
    boolean v5 = connection.negotiated().mqtt5();
    List<MqttTopicSubscription> requested = subscribe.payload().topicSubscriptions();
    int[] codes = new int[requested.size()];
    for (int i = 0; i < codes.length; i++) {
      MqttTopicSubscription subscription = requested.get(i);
      String filter = subscription.topicFilter();
      if (RESPONSE_TOPIC.equals(filter) && MqttStrings.isWellFormed(filter)) {
        int qos = Math.min(subscription.qualityOfService().value(), 1);
        responseQos = qos;
        codes[i] = qos;
      } else {
        LOG.debug(
            "{} provisioning session: subscription refused: {}",
            connection.logPrefix(),
            LogSafe.text(filter));
        codes[i] = v5 ? TOPIC_FILTER_INVALID : MqttQoS.FAILURE.value();
      }
    }
    connection
        .ctx()
        .writeAndFlush(
            new MqttSubAckMessage(
                new MqttFixedHeader(MqttMessageType.SUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
                new MqttMessageIdAndPropertiesVariableHeader(
                    subscribe.idAndPropertiesVariableHeader().messageId(),
                    MqttProperties.NO_PROPERTIES),
                new MqttSubAckPayload(codes)));
  }

  /** An UNSUBSCRIBE: answered (MQTT 5: 0x00 for the answer's topic if subscribed, else 0x11). */
  public void onUnsubscribe(MqttUnsubscribeMessage unsubscribe) {
    MqttMessageBuilders.UnsubAckBuilder unsubAck =
        MqttMessageBuilders.unsubAck().packetId(unsubscribe.variableHeader().messageId());
    for (String filter : unsubscribe.payload().topics()) {
      boolean existed = RESPONSE_TOPIC.equals(filter) && responseQos >= 0;
      if (existed) {
        responseQos = -1;
      }
      if (connection.negotiated().mqtt5()) {
        unsubAck.addReasonCode(existed ? SUCCESS : NO_SUBSCRIPTION_EXISTED);
      }
    }
    connection.ctx().writeAndFlush(unsubAck.build());
  }

  /** A PUBREL of the QoS 2 request: PUBCOMP. */
  public void onPubrel(int packetId) {
    if (step != Step.ANSWERED) {
      connection.ctx().writeAndFlush(reply(MqttMessageType.PUBCOMP, packetId));
    }
  }

  /** The channel closed. */
  public void channelClosed() {
    cancelDeadline();
  }

  private void cancelDeadline() {
    ScheduledFuture<?> pending = deadline;
    if (pending != null) {
      pending.cancel(false);
      deadline = null;
    }
  }

  private MqttMessage reply(MqttMessageType type, int packetId) {
    MqttFixedHeader header = new MqttFixedHeader(type, false, MqttQoS.AT_MOST_ONCE, false, 2);
    return connection.negotiated().mqtt5()
        ? new MqttMessage(
            header,
            new MqttPubReplyMessageVariableHeader(packetId, (byte) 0, MqttProperties.NO_PROPERTIES))
        : new MqttMessage(header, MqttMessageIdVariableHeader.from(packetId));
  }

  private static @Nullable InetAddress address(@Nullable SocketAddress remote) {
    return remote instanceof InetSocketAddress inet ? inet.getAddress() : null;
  }
}
