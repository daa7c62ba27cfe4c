package io.fieldline.transport.mqtt.publish;

import io.fieldline.common.deadletter.DeadLetter;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.GatewayLink;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.log.LogThrottles;
import io.fieldline.transport.common.pacing.RequestPacer;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import io.fieldline.transport.common.rpc.ClientRpcAnswers;
import io.fieldline.transport.mqtt.MqttMetrics.GatewayRefusal;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.Slot;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.ServerRpcs;
import io.fieldline.transport.mqtt.gateway.GatewayPublishes;
import io.fieldline.transport.mqtt.gateway.GatewayRefusedException;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where one PUBLISH of the device API goes, by its {@link DeviceTopic}: telemetry and attributes
 * are parsed ({@code common}'s {@code PayloadParser}) and submitted to the device gateway;
 * client-side RPC requests are answered at once ({@link ClientRpcAnswers}), reading paced to {@code
 * client-rpc-rate} ({@link RequestPacer}); attribute requests are read and answered through the
 * session's downlink ({@link AttributeRequests}); answers to server-side RPC go to the request they
 * answer ({@link ServerRpcs}). These three store nothing: they are acknowledged at once. The
 * gateway topics ({@code v1/gateway/*}) of a device that is a gateway go to its {@link
 * GatewayPublishes} (its children's attribute requests read through the same paced {@link
 * AttributeRequests}); from any other device they are an unknown topic. A new topic is one {@link
 * DeviceTopic.Kind} and one case of {@link #route} (or of {@code routeGateway}). An invalid
 * payload, and a gateway message over a bound of its session ({@link GatewayRefusedException}), is
 * dead-lettered (policy {@code dead-letter}) or closes the connection (policy {@code close}); a
 * PUBLISH to an unknown topic is always dead-lettered and acknowledged. A gateway message naming a
 * device the gateway may not act for is refused the same way, once its children are looked up (the
 * stage fails with the {@link GatewayRefusedException}). MQTT 5 acknowledgements of dead letters
 * carry a reason code (0x99 payload format invalid, 0x97 quota exceeded, 0x87 not authorized, 0x90
 * topic name invalid).
 *
 * <p>The answer is the stage whose outcome decides the acknowledgement: {@link Ack#stored()} only
 * once the message (or its dead letter) is stored. The payload arrives as a {@code byte[]}: no
 * {@code ByteBuf} leaves the event loop.
 *
 * <p>Confined to the channel's event loop; one per connected session.
 */
final class PublishRouter {

  private static final Logger LOG = LoggerFactory.getLogger(PublishRouter.class);
  private static final LogThrottle PAYLOAD_WARNINGS = new LogThrottle();
  private static final LogThrottle TOPIC_WARNINGS = new LogThrottle();
  private static final LogThrottle RPC_WARNINGS = new LogThrottle();
  // One budget per reason: a flood of one refusal must not hide the others.
  private static final LogThrottles<GatewayRefusal> REFUSAL_WARNINGS =
      new LogThrottles<>(GatewayRefusal.class);

  private static final String UNKNOWN_TOPIC = "unknown topic: not part of the device API";
  private static final String NOT_A_GATEWAY =
      "unknown topic for this device: a gateway topic, but the device is not a gateway"
          + " (its additionalInfo has no \"gateway\":true)";
  private static final CompletableFuture<Ack> NOTHING_TO_STORE =
      CompletableFuture.completedFuture(Ack.stored());

  private final SessionContext context;
  private final Connection connection;
  private final Device device;
  private final ClientRpcAnswers rpc;
  private final RequestPacer rpcPacer;
  private final AttributeRequests attributeRequests;
  private final ServerRpcs serverRpcs;
  private final @Nullable GatewayPublishes gateway;
  private final FirmwareRequests firmware;

  PublishRouter(
      SessionContext context,
      Connection connection,
      Device device,
      SessionState session,
      Downlink downlink) {
    this.context = context;
    this.connection = connection;
    this.device = device;
    this.rpc =
        new ClientRpcAnswers(
            context.config().maxPacketSize(),
            context.config().maxInflight(),
            System::currentTimeMillis);
    this.serverRpcs = downlink.rpcs();
    // Read once per connection: a device made a gateway over REST becomes one when it reconnects.
    boolean isGateway = GatewayLink.isGateway(device);
    MqttTransportConfig config = context.config();
    this.attributeRequests =
        new AttributeRequests(
            context,
            connection,
            device,
            session,
            downlink,
            isGateway ? config.gateway().attributeRequestRate() : config.attributeRequestRate(),
            isGateway ? config.gateway().attributeRequestBurst() : config.attributeRequestBurst());
    this.gateway =
        isGateway
            ? new GatewayPublishes(
                context, connection, device, session, downlink, attributeRequests)
            : null;
    this.firmware = new FirmwareRequests(context, connection, device, session, downlink);
    this.rpcPacer =
        new RequestPacer(
            context.config().clientRpcRate(), context.config().clientRpcBurst(), eventLoopNanos());
  }

  /**
   * Routes one PUBLISH; one to a topic outside the device API is kept as a dead letter (with its
   * topic) and acknowledged once stored, as ThingsBoard acknowledges it.
   *
   * @param slot its place in the acknowledgement window: a message kept as a dead letter sets the
   *     MQTT 5 reason code its acknowledgement carries ({@link PublishReasons})
   * @param dup the PUBLISH's DUP flag (a retransmission)
   * @return its outcome, or {@code null} if the connection was closed by the invalid-payload policy
   */
  @Nullable CompletionStage<Ack> route(
      DeviceTopic topic, String topicName, byte[] payload, Slot slot, boolean dup) {
    long now = System.currentTimeMillis();
    if (topic.kind().isGateway()) {
      return routeGateway(topic, topicName, payload, slot, dup, now);
    }
    try {
      return switch (topic.kind()) {
        case TELEMETRY ->
            context
                .gateway()
                .submit(
                    new DeviceMessage.PostTelemetry(
                        device.id(), now, context.parser().parseTelemetry(payload, now)));
        case ATTRIBUTES ->
            context
                .gateway()
                .submit(
                    new DeviceMessage.PostAttributes(
                        device.id(), now, context.parser().parseAttributes(payload)));
        case RPC_REQUEST -> {
          Duration pause = rpcPacer.delayAfter(eventLoopNanos());
          if (!pause.isZero()) {
            connection.pauseFor(Pause.RPC_RATE, pause);
          }
          answerRpc(topic, rpc.answerPayload(payload));
          yield NOTHING_TO_STORE;
        }
        case RPC_RESPONSE -> {
          serverRpcs.onResponse(topic.requestId(), payload);
          yield NOTHING_TO_STORE;
        }
        case ATTRIBUTES_REQUEST -> {
          attributeRequests.onRequest(topic.requestId(), payload);
          yield NOTHING_TO_STORE;
        }
        case FW_CHUNK_REQUEST -> {
          firmware.onRequest(topic.requestId(), payload);
          yield NOTHING_TO_STORE;
        }
        case UNKNOWN -> {
          slot.reasonCode(PublishReasons.TOPIC_NAME_INVALID);
          yield unknownTopic(topicName, payload, now, UNKNOWN_TOPIC);
        }
        case GATEWAY_CONNECT,
            GATEWAY_DISCONNECT,
            GATEWAY_TELEMETRY,
            GATEWAY_ATTRIBUTES,
            GATEWAY_ATTRIBUTES_REQUEST,
            GATEWAY_RPC ->
            throw new IllegalStateException("gateway topics are routed by routeGateway");
      };
    } catch (PayloadFormatException e) {
      slot.reasonCode(PublishReasons.PAYLOAD_FORMAT_INVALID);
      return invalidPayload(topicName, payload, now, e);
    }
  }

  /** The acknowledgement of {@code slot} was sent. */
  void acknowledged(Slot slot) {
    if (gateway != null) {
      gateway.acknowledged(slot);
    }
  }

  private @Nullable CompletionStage<Ack> routeGateway(
      DeviceTopic topic, String topicName, byte[] payload, Slot slot, boolean dup, long now) {
    GatewayPublishes publishes = gateway;
    if (publishes == null) {
      slot.reasonCode(PublishReasons.TOPIC_NAME_INVALID);
      context.metrics().gatewayRefused(GatewayRefusal.NOT_GATEWAY, false);
      return unknownTopic(topicName, payload, now, NOT_A_GATEWAY);
    }
    CompletionStage<Ack> outcome;
    try {
      outcome =
          switch (topic.kind()) {
            case GATEWAY_TELEMETRY -> publishes.telemetry(payload, slot, dup, now);
            case GATEWAY_ATTRIBUTES -> publishes.attributes(payload, slot, dup, now);
            case GATEWAY_CONNECT -> publishes.connect(payload);
            case GATEWAY_DISCONNECT -> publishes.disconnect(payload);
            case GATEWAY_ATTRIBUTES_REQUEST -> publishes.attributesRequest(payload);
            case GATEWAY_RPC -> publishes.rpc(payload);
            default -> throw new IllegalArgumentException("not a gateway topic: " + topic.kind());
          };
    } catch (PayloadFormatException e) {
      slot.reasonCode(PublishReasons.PAYLOAD_FORMAT_INVALID);
      return invalidPayload(topicName, payload, now, e);
    } catch (GatewayRefusedException e) {
      return refused(topicName, payload, now, slot, e);
    }
    // A refusal found once the message's children are looked up (a device the gateway may not act
    // for) comes as the stage's failure, before anything of the message was submitted: refused the
    // same way. Only a failure hops to the event loop.
    return outcome
        .toCompletableFuture()
        .exceptionallyComposeAsync(
            error -> {
              Throwable cause = unwrapped(error);
              if (cause instanceof GatewayRefusedException refusal) {
                CompletionStage<Ack> refused = refused(topicName, payload, now, slot, refusal);
                // Closed by policy: the connection is gone, the outcome matters no more.
                return refused != null ? refused : new CompletableFuture<>();
              }
              return CompletableFuture.failedFuture(cause);
            },
            connection.ctx().executor());
  }

  private static Throwable unwrapped(Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  // Refused like an invalid payload, by the same policy: the message is kept whole as a dead letter
  // and acknowledged (the gateway would otherwise resend it for ever), or the connection closes.
  private @Nullable CompletionStage<Ack> refused(
      String topicName, byte[] payload, long now, Slot slot, GatewayRefusedException e) {
    slot.reasonCode(
        e.reason() == GatewayRefusal.NOT_OWNER
            ? PublishReasons.NOT_AUTHORIZED
            : PublishReasons.QUOTA_EXCEEDED);
    boolean close = context.config().invalidPayload() == InvalidPayloadPolicy.CLOSE;
    context.metrics().gatewayRefused(e.reason(), !close);
    if (close) {
      connection.reject(
          CloseReason.PAYLOAD, "gateway message on {} refused: {}", topicName, e.getMessage());
      return null;
    }
    REFUSAL_WARNINGS
        .get(e.reason())
        .warn(
            LOG,
            "{} gateway message on {} refused and dead-lettered: {}",
            connection.logPrefix(),
            topicName,
            e.getMessage());
    return context
        .deadLetters()
        .write(new DeadLetter(device.id(), now, topicName, e.getMessage(), payload))
        .thenApply(stored -> Ack.stored());
  }

  // Flushed now: the answer must not wait for earlier PUBLISHes still being stored. MQTT 5
  // §3.1.2.11.4: an answer larger than the client's Maximum Packet Size is not sent.
  private void answerRpc(DeviceTopic topic, byte[] response) {
    String responseTopic = DeviceTopic.RPC_RESPONSE_PREFIX + topic.requestId();
    // Fixed header at most 5, topic length 2, property length 1.
    long size = 8L + ByteBufUtil.utf8Bytes(responseTopic) + response.length;
    if (!connection.negotiated().clientAccepts(size)) {
      RPC_WARNINGS.warn(
          LOG,
          "{} client-side RPC answer of {} bytes not sent: above the client's maximum packet size",
          connection.logPrefix(),
          size);
      return;
    }
    connection
        .ctx()
        .writeAndFlush(
            MqttMessageBuilders.publish()
                .topicName(responseTopic)
                .qos(MqttQoS.AT_MOST_ONCE)
                .payload(Unpooled.wrappedBuffer(response))
                .build());
  }

  // The clock the pauses are scheduled on (the system's, but a test's event loop may freeze it).
  private long eventLoopNanos() {
    return connection.ctx().executor().ticker().nanoTime();
  }

  // ThingsBoard 4.x acknowledges a PUBLISH to a topic it does not serve: so do we, after keeping
  // the message as a dead letter (its topic is in it), so that nothing acknowledged is lost and a
  // firmware's typo costs neither its connection nor its data.
  private CompletionStage<Ack> unknownTopic(
      String topicName, byte[] payload, long now, String reason) {
    TOPIC_WARNINGS.warn(
        LOG,
        "{} PUBLISH to unknown topic '{}' dead-lettered",
        connection.logPrefix(),
        LogSafe.text(topicName));
    context.metrics().unknownTopicDeadLettered();
    return context
        .deadLetters()
        .write(new DeadLetter(device.id(), now, topicName, reason, payload))
        .thenApply(stored -> Ack.stored());
  }

  private @Nullable CompletionStage<Ack> invalidPayload(
      String topicName, byte[] payload, long now, PayloadFormatException e) {
    // Its constructors take a message: never null.
    String reason = String.valueOf(e.getMessage());
    if (context.config().invalidPayload() == InvalidPayloadPolicy.CLOSE) {
      connection.reject(CloseReason.PAYLOAD, "invalid payload on {}: {}", topicName, reason);
      return null;
    }
    PAYLOAD_WARNINGS.warn(
        LOG,
        "{} invalid payload on {} dead-lettered: {}",
        connection.logPrefix(),
        topicName,
        reason);
    context.metrics().deadLettered();
    return context
        .deadLetters()
        .write(new DeadLetter(device.id(), now, topicName, reason, payload))
        .thenApply(stored -> Ack.stored());
  }
}
