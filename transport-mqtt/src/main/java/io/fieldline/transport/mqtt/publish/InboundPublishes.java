package io.fieldline.transport.mqtt.publish;

import io.fieldline.common.device.Device;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.AckType;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.Slot;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.MqttStrings;
import io.fieldline.transport.mqtt.session.Negotiated;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PUBLISH path of one connected session: route ({@link PublishRouter}), then answer in arrival
 * order once each message is stored — PUBACK for QoS 1, PUBREC for QoS 2 (then PUBREL → PUBCOMP).
 *
 * <p>Every PUBLISH (QoS 0 included) takes a slot in the {@link OrderedAckWindow} until its outcome
 * is known, so the window bounds the work a connection has in flight; at {@code max-inflight} the
 * connection stops reading the socket ({@link Pause#WINDOW}) and resumes at {@code
 * inflight-low-water}. QoS 2 packet ids between PUBREC and PUBREL are bounded by {@code
 * max-awaiting-release} (the oldest is forgotten beyond it). A failed write produces no
 * acknowledgement: once every earlier PUBLISH is acknowledged the connection closes and the device
 * retransmits (MQTT 3.1.1 §4.4).
 *
 * <p>Confined to the channel's event loop: outcomes completed elsewhere hop back to it.
 */
public final class InboundPublishes implements OrderedAckWindow.Sink {

  private static final Logger LOG = LoggerFactory.getLogger(InboundPublishes.class);
  private static final LogThrottle WRITE_WARNINGS = new LogThrottle();
  private static final LogThrottle QOS2_WARNINGS = new LogThrottle();
  // MQTT 5 §3.7.2.1: PUBCOMP for a PUBREL whose packet id is not awaiting release.
  private static final byte PACKET_IDENTIFIER_NOT_FOUND = (byte) 0x92;

  private final SessionContext context;
  private final Connection connection;
  private final ChannelHandlerContext ctx;
  private final SessionState session;
  private final PublishRouter router;
  private final Negotiated negotiated;
  private final TopicAliases aliases;
  private final OrderedAckWindow window = new OrderedAckWindow();
  // QoS 2 packet ids received on this connection and not yet PUBREC'd. Not session state: if the
  // write fails the connection closes and a retransmission after reconnect must be stored.
  private final Set<Integer> qos2Storing = new HashSet<>();
  // MQTT 5: QoS 2 packet ids PUBREC'd on this connection and not yet released: they count against
  // the Receive Maximum until PUBCOMP (§4.9), ids from earlier connections do not.
  private final Set<Integer> releasePending = new HashSet<>();

  /**
   * The PUBLISH path of {@code device}'s session, accepted on {@code connection}; answers to the
   * device go through {@code downlink}.
   */
  public InboundPublishes(
      SessionContext context,
      Connection connection,
      Device device,
      SessionState session,
      Downlink downlink) {
    this.context = context;
    this.connection = connection;
    this.ctx = connection.ctx();
    this.session = session;
    this.router = new PublishRouter(context, connection, device, session, downlink);
    this.negotiated = connection.negotiated();
    this.aliases = new TopicAliases(negotiated.topicAliasMaximum());
  }

  /** A PUBLISH from the device. */
  public void onPublish(MqttPublishMessage publish) {
    long receivedNanos = System.nanoTime();
    MqttQoS qos = publish.fixedHeader().qosLevel();
    context.metrics().publishReceived(qos.value());
    String topicName = publish.variableHeader().topicName();
    if (negotiated.mqtt5()) {
      String resolved = aliases.resolve(topicName, publish.variableHeader().properties());
      if (resolved == null) {
        connection.reject(aliases.violation(), "topic alias missing, invalid or undefined");
        return;
      }
      topicName = resolved;
      if (!MqttStrings.isValidResponseTopic(publish.variableHeader().properties())) {
        // MQTT 5 §3.3.2.3.5: a Response Topic is a topic name; wildcards are a Protocol Error.
        connection.reject(CloseReason.RESPONSE_TOPIC, "Response Topic empty or with a wildcard");
        return;
      }
    }
    DeviceTopic topic = DeviceTopic.parse(topicName);
    if (topic.kind() != DeviceTopic.Kind.TELEMETRY
        && topic.kind() != DeviceTopic.Kind.ATTRIBUTES
        && !MqttStrings.isWellFormed(topicName)) {
      // MQTT 3.1.1 §1.5.3, MQTT 5 §1.5.4: U+0000 or ill-formed UTF-8 in a topic is malformed.
      connection.reject(CloseReason.BAD_UTF8, "topic with U+0000 or bad UTF-8");
      return;
    }
    int packetId = publish.variableHeader().packetId();
    AckType ackType = ackType(qos);
    boolean redelivered =
        qos == MqttQoS.EXACTLY_ONCE
            && (session.awaitingRelease().contains(packetId) || qos2Storing.contains(packetId));
    if (negotiated.mqtt5()
        && ackType != AckType.NONE
        && !redelivered
        && window.acknowledgeable() + releasePending.size() >= negotiated.receiveMaximum()) {
      // MQTT 5 §3.3.4, §4.9: more unacknowledged QoS 1/2 PUBLISHes on this connection than
      // CONNACK's Receive Maximum (a QoS 2 one counts until its PUBCOMP).
      connection.reject(
          CloseReason.RECEIVE_MAXIMUM,
          "more than {} unacknowledged QoS 1/2 PUBLISHes",
          negotiated.receiveMaximum());
      return;
    }
    if (redelivered) {
      // MQTT 3.1.1 §4.3.3: a redelivered QoS 2 PUBLISH awaiting PUBREL is not stored again. Its
      // PUBREC queues behind the first copy's, so it is sent only if that copy was stored.
      window.complete(window.register(packetId, ackType, receivedNanos));
      drain();
      return;
    }
    byte[] payload = ByteBufUtil.getBytes(publish.payload());
    Slot slot = window.register(packetId, ackType, receivedNanos);
    if (qos == MqttQoS.EXACTLY_ONCE) {
      qos2Storing.add(packetId);
    }
    // MQTT 5: one packet beyond the Receive Maximum is still read, so that a client sending more
    // unacknowledged QoS 1/2 PUBLISHes than CONNACK allowed meets DISCONNECT 0x93 above rather
    // than a socket that stops being read (it could not tell the two apart).
    if (window.size() >= context.config().maxInflight() + (negotiated.mqtt5() ? 1 : 0)) {
      connection.pause(Pause.WINDOW);
    }
    CompletionStage<Ack> outcome;
    try {
      outcome = router.route(topic, topicName, payload, slot, publish.fixedHeader().isDup());
    } catch (RuntimeException e) {
      outcome = CompletableFuture.failedFuture(e);
    }
    if (outcome == null) {
      return; // the connection was closed by policy
    }
    CompletableFuture<Ack> future = outcome.toCompletableFuture();
    if (future.isCompletedExceptionally()) {
      onOutcome(slot, null, failure(future));
    } else if (future.isDone()) {
      onOutcome(slot, future.join(), null);
    } else {
      future.whenCompleteAsync(
          (ack, error) -> onOutcome(slot, ack, error), ctx.channel().eventLoop());
    }
  }

  /** A PUBREL: the second half of QoS 2 (MQTT 3.1.1 §4.3.3). */
  public void onPubrel(int packetId) {
    // PUBCOMP for every PUBREL, even an unknown packet id (MQTT 5: reason 0x92 for that).
    boolean known = session.awaitingRelease().remove(packetId);
    releasePending.remove(packetId);
    MqttFixedHeader header =
        new MqttFixedHeader(MqttMessageType.PUBCOMP, false, MqttQoS.AT_MOST_ONCE, false, 2);
    ctx.writeAndFlush(
        negotiated.mqtt5()
            ? new MqttMessage(
                header,
                new MqttPubReplyMessageVariableHeader(
                    packetId,
                    known ? 0 : PACKET_IDENTIFIER_NOT_FOUND,
                    MqttProperties.NO_PROPERTIES))
            : new MqttMessage(header, MqttMessageIdVariableHeader.from(packetId)));
  }

  private void onOutcome(Slot slot, @Nullable Ack ack, @Nullable Throwable error) {
    if (!ctx.channel().isActive()) {
      return;
    }
    if (error == null && ack != null && ack.isStored()) {
      window.complete(slot);
    } else {
      window.fail(slot);
      context.metrics().writeFailed();
      // Stop taking new work: this connection will close once earlier PUBLISHes are answered.
      connection.pause(Pause.FAILING);
      WRITE_WARNINGS.warn(
          LOG,
          "{} message {} not stored, no PUBACK: {}",
          connection.logPrefix(),
          slot.packetId(),
          error != null ? String.valueOf(error) : String.valueOf(ack));
    }
    drain();
  }

  private void drain() {
    if (window.drain(this)) {
      ctx.flush();
    }
    if (window.size() <= context.config().inflightLowWater()) {
      connection.resume(Pause.WINDOW);
    }
  }

  @Override
  public void acknowledge(Slot slot) {
    boolean pubrec = slot.ackType() == AckType.PUBREC;
    if (pubrec) {
      qos2Storing.remove(slot.packetId());
    }
    // MQTT 5 §4.3.3: a PUBREC with an error reason code ends the QoS 2 exchange (no PUBREL).
    if (pubrec && (!negotiated.mqtt5() || Byte.toUnsignedInt(slot.reasonCode()) < 0x80)) {
      if (negotiated.mqtt5()) {
        releasePending.add(slot.packetId());
      }
      int forgotten = session.awaitRelease(slot.packetId(), context.config().maxAwaitingRelease());
      if (forgotten >= 0) {
        context.metrics().qos2Forgotten();
        QOS2_WARNINGS.warn(
            LOG,
            "{} more than {} QoS 2 ids awaiting PUBREL: forgot id {}",
            connection.logPrefix(),
            context.config().maxAwaitingRelease(),
            forgotten);
      }
    }
    // MQTT 3.1.1 §3.3.4: one PUBACK (QoS 1) or PUBREC (QoS 2) per PUBLISH, after it is stored.
    MqttFixedHeader header =
        new MqttFixedHeader(
            pubrec ? MqttMessageType.PUBREC : MqttMessageType.PUBACK,
            false,
            MqttQoS.AT_MOST_ONCE,
            false,
            2);
    ChannelFuture written =
        ctx.write(
            negotiated.mqtt5()
                ? new MqttMessage(
                    header,
                    new MqttPubReplyMessageVariableHeader(
                        slot.packetId(),
                        slot.reasonCode(),
                        PublishReasons.properties(slot, negotiated)))
                : new MqttMessage(header, MqttMessageIdVariableHeader.from(slot.packetId())));
    context.metrics().acknowledged(pubrec, slot.receivedNanos());
    // What the session remembers of an unacknowledged message (a gateway's timestamps) is dropped
    // only once the acknowledgement has left: one still queued when the connection closes (a
    // later message's write failed) never reaches the client, which sends the message again.
    written.addListener(
        future -> {
          if (future.isSuccess()) {
            router.acknowledged(slot);
          }
        });
  }

  @Override
  public void failed(Slot slot) {
    connection.close(CloseReason.WRITE_FAILED);
  }

  private static AckType ackType(MqttQoS qos) {
    return switch (qos) {
      case AT_MOST_ONCE -> AckType.NONE;
      case AT_LEAST_ONCE -> AckType.PUBACK;
      case EXACTLY_ONCE -> AckType.PUBREC;
      case FAILURE -> throw new IllegalArgumentException("invalid QoS");
    };
  }

  private static Throwable failure(CompletableFuture<Ack> future) {
    try {
      future.join();
      return new IllegalStateException("not failed");
    } catch (RuntimeException e) {
      return e.getCause() != null ? e.getCause() : e;
    }
  }
}
