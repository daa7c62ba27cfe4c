package io.fieldline.transport.mqtt.publish;

import io.fieldline.common.Ack;
import io.fieldline.common.DeadLetter;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceMessage;
import io.fieldline.common.PayloadFormatException;
import io.fieldline.transport.mqtt.MqttTransportConfig.InvalidPayloadPolicy;
import io.fieldline.transport.mqtt.ack.OrderedAckWindow.Slot;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.downlink.ServerRpcs;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.RateLimitedLog;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where one PUBLISH of the device API goes, by its {@link DeviceTopic}: telemetry and attributes
 * are parsed ({@code common}'s {@code PayloadParser}) and submitted to the device gateway;
 * client-side RPC requests are answered at once ({@link ClientRpc}), reading paced to {@code
 * client-rpc-rate} ({@link RequestPacer}); attribute requests are read and answered through the
 * session's downlink ({@link AttributeRequests}); answers to server-side RPC go to the request they
 * answer ({@link ServerRpcs}). These three store nothing: they are acknowledged at once. An invalid
 * payload is dead-lettered (policy {@code dead-letter}) or closes the connection (policy {@code
 * close}); a PUBLISH to an unknown topic is always dead-lettered and acknowledged. MQTT 5
 * acknowledgements of dead letters carry a reason code (0x99 payload format invalid, 0x90 topic
 * name invalid).
 *
 * <p>The answer is the stage whose outcome decides the acknowledgement: {@link Ack#stored()} only
 * once the message (or its dead letter) is stored. The payload arrives as a {@code byte[]}: no
 * {@code ByteBuf} leaves the event loop.
 *
 * <p>Confined to the channel's event loop; one per connected session.
 */
final class PublishRouter {

  private static final Logger LOG = LoggerFactory.getLogger(PublishRouter.class);
  private static final RateLimitedLog PAYLOAD_WARNINGS =
      new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);
  private static final RateLimitedLog TOPIC_WARNINGS =
      new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);
  private static final RateLimitedLog RPC_WARNINGS = new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);
  private static final String UNKNOWN_TOPIC = "unknown topic: not part of the device API";
  private static final CompletableFuture<Ack> NOTHING_TO_STORE =
      CompletableFuture.completedFuture(Ack.stored());

  private final SessionContext context;
  private final Connection connection;
  private final Device device;
  private final ClientRpc rpc;
  private final RequestPacer rpcPacer;
  private final AttributeRequests attributeRequests;
  private final ServerRpcs serverRpcs;
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
    this.rpc = new ClientRpc(context.config());
    this.attributeRequests = new AttributeRequests(context, connection, device, session, downlink);
    this.serverRpcs = downlink.rpcs();
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
   * @return its outcome, or {@code null} if the connection was closed by the invalid-payload policy
   */
  @Nullable CompletionStage<Ack> route(
      DeviceTopic topic, String topicName, byte[] payload, Slot slot) {
    long now = System.currentTimeMillis();
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
          answerRpc(topic, rpc.answer(payload));
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
          yield unknownTopic(topicName, payload, now);
        }
      };
    } catch (PayloadFormatException e) {
      slot.reasonCode(PublishReasons.PAYLOAD_FORMAT_INVALID);
      return invalidPayload(topicName, payload, now, e);
    }
  }

  // Flushed now: the answer must not wait for earlier PUBLISHes still being stored. MQTT 5
  // §3.1.2.11.4: an answer larger than the client's Maximum Packet Size is not sent.
  private void answerRpc(DeviceTopic topic, byte[] response) {
    String responseTopic = DeviceTopic.RPC_RESPONSE_PREFIX + topic.requestId();
    // Fixed header at most 5, topic length 2, property length 1.
    long size = 8L + ByteBufUtil.utf8Bytes(responseTopic) + response.length;
    if (!connection.negotiated().clientAccepts(size)) {
      RPC_WARNINGS.warn(
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
  private CompletionStage<Ack> unknownTopic(String topicName, byte[] payload, long now) {
    TOPIC_WARNINGS.warn(
        "{} PUBLISH to unknown topic '{}' dead-lettered",
        connection.logPrefix(),
        LogSafe.text(topicName));
    context.metrics().unknownTopicDeadLettered();
    return context
        .deadLetters()
        .write(new DeadLetter(device.id(), now, topicName, UNKNOWN_TOPIC, payload))
        .thenApply(stored -> Ack.stored());
  }

  private @Nullable CompletionStage<Ack> invalidPayload(
      String topicName, byte[] payload, long now, PayloadFormatException e) {
    if (context.config().invalidPayload() == InvalidPayloadPolicy.CLOSE) {
      connection.reject(
          CloseReason.PAYLOAD, "invalid payload on {}: {}", topicName, e.getMessage());
      return null;
    }
    PAYLOAD_WARNINGS.warn(
        "{} invalid payload on {} dead-lettered: {}",
        connection.logPrefix(),
        topicName,
        e.getMessage());
    context.metrics().deadLettered();
    return context
        .deadLetters()
        .write(new DeadLetter(device.id(), now, topicName, e.getMessage(), payload))
        .thenApply(stored -> Ack.stored());
  }
}
