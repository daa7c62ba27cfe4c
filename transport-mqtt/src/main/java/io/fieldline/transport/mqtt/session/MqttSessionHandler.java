package io.fieldline.transport.mqtt.session;

import io.fieldline.common.Device;
import io.fieldline.transport.mqtt.MqttMetrics.ConnectResult;
import io.fieldline.transport.mqtt.MqttMetrics.PauseCause;
import io.fieldline.transport.mqtt.pipeline.KeepAlive;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttIdentifierRejectedException;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttTopicSubscription;
import io.netty.handler.codec.mqtt.MqttUnacceptableProtocolVersionException;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One MQTT connection: the CONNECT handshake, the packet state machine, and the hand-off of
 * PUBLISHes to {@link InboundPublishes}.
 *
 * <p>States: awaiting CONNECT → authenticating (socket reads paused; PUBLISHes the client pipelined
 * behind CONNECT are queued, bounded) → connected → closed. Every bad input ends in {@link
 * #close(CloseReason)}, which affects this connection only.
 *
 * <p>Confined to the channel's event loop; one instance per channel (not sharable).
 */
public final class MqttSessionHandler extends ChannelInboundHandlerAdapter
    implements SessionRegistry.Connection {

  private static final Logger LOG = LoggerFactory.getLogger(MqttSessionHandler.class);
  private static final RateLimitedLog REJECTIONS = new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);

  private enum State {
    AWAIT_CONNECT,
    AUTHENTICATING,
    CONNECTED,
    CLOSED
  }

  /** Why reading this socket is paused; reading resumes when the set is empty. */
  enum Pause {
    AUTH,
    WINDOW,
    STORAGE,
    FAILING
  }

  private final SessionContext context;
  private final EnumSet<Pause> pauses = EnumSet.noneOf(Pause.class);
  private final ArrayDeque<MqttMessage> queuedBeforeConnack = new ArrayDeque<>();
  private @Nullable ChannelHandlerContext ctx;
  private @Nullable InboundPublishes publishes;
  private @Nullable Device device;
  private SessionRegistry.@Nullable SessionState session;
  private State state = State.AWAIT_CONNECT;
  private boolean cleanSession = true;
  private String logPrefix = "[mqtt|-|-]";

  public MqttSessionHandler(SessionContext context) {
    this.context = context;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    SocketAddress remote = ctx.channel().remoteAddress();
    logPrefix = "[mqtt|-|" + remote + "]";
    context.metrics().connectionOpened();
    super.channelActive(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    boolean wasConnected = state == State.CONNECTED;
    state = State.CLOSED;
    context.metrics().connectionClosed();
    releaseQueued();
    if (device != null) {
      context.sessions().unregister(device.id(), cleanSession, this);
    }
    if (wasConnected) {
      LOG.debug("{} connection closed", logPrefix);
    }
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof MqttMessage message)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    boolean keep = false;
    try {
      if (state == State.CLOSED) {
        return;
      }
      if (message.decoderResult().isFailure()) {
        onDecoderFailure(message.decoderResult().cause());
        return;
      }
      if (state == State.AUTHENTICATING) {
        keep = queueBeforeConnack(message);
        return;
      }
      dispatch(message);
    } finally {
      if (!keep) {
        ReferenceCountUtil.release(message);
      }
    }
  }

  private void dispatch(MqttMessage message) {
    switch (message.fixedHeader().messageType()) {
      case CONNECT -> onConnect((MqttConnectMessage) message);
      case PUBLISH -> {
        if (requireConnected()) {
          publishes().onPublish((MqttPublishMessage) message);
        }
      }
      case PUBREL -> {
        if (requireConnected()) {
          publishes()
              .onPubrel(((MqttMessageIdVariableHeader) message.variableHeader()).messageId());
        }
      }
      case SUBSCRIBE -> {
        if (requireConnected()) {
          onSubscribe((MqttSubscribeMessage) message);
        }
      }
      case UNSUBSCRIBE -> {
        if (requireConnected()) {
          onUnsubscribe((MqttUnsubscribeMessage) message);
        }
      }
      case PINGREQ -> {
        if (requireConnected()) {
          // MQTT 3.1.1 §3.12.4: the server MUST answer PINGREQ with PINGRESP.
          channelCtx().writeAndFlush(MqttMessage.PINGRESP);
        }
      }
      case DISCONNECT -> close(CloseReason.CLIENT_DISCONNECT);
      // Fieldline never sends QoS > 0 to devices, so acknowledgements from them are ignored.
      case PUBACK, PUBREC, PUBCOMP -> requireConnected();
      default -> close(CloseReason.PROTOCOL);
    }
  }

  private boolean requireConnected() {
    if (state != State.CONNECTED) {
      // MQTT 3.1.1 §3.1.0: the first packet from the client MUST be CONNECT.
      close(CloseReason.PROTOCOL);
      return false;
    }
    return true;
  }

  private void onDecoderFailure(Throwable cause) {
    if (cause instanceof TooLongFrameException) {
      reject(
          CloseReason.TOO_LARGE, "packet larger than {} bytes", context.config().maxPacketSize());
    } else if (cause instanceof MqttUnacceptableProtocolVersionException
        && state == State.AWAIT_CONNECT) {
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_UNACCEPTABLE_PROTOCOL_VERSION,
          ConnectResult.UNSUPPORTED_VERSION);
    } else if (cause instanceof MqttIdentifierRejectedException && state == State.AWAIT_CONNECT) {
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
          ConnectResult.IDENTIFIER_REJECTED);
    } else {
      reject(CloseReason.MALFORMED, "malformed packet: {}", cause.getMessage());
    }
  }

  private void onConnect(MqttConnectMessage connect) {
    if (state != State.AWAIT_CONNECT) {
      // MQTT 3.1.1 §3.1.0: a second CONNECT is a protocol violation.
      reject(CloseReason.PROTOCOL, "second CONNECT");
      return;
    }
    if (connect.variableHeader().version() == MqttVersion.MQTT_5.protocolLevel()) {
      // Until MQTT 5 is implemented: a clean, v5-encoded refusal (the decoder recorded the
      // version, so the encoder writes a v5 CONNACK with reason code 0x84).
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_UNSUPPORTED_PROTOCOL_VERSION,
          ConnectResult.UNSUPPORTED_VERSION);
      return;
    }
    String clientId = connect.payload().clientIdentifier();
    cleanSession = connect.variableHeader().isCleanSession();
    logPrefix = "[mqtt|" + clientId + "|" + channelCtx().channel().remoteAddress() + "]";
    if (clientId.length() > context.config().maxClientIdLength()) {
      // Netty's decoder enforces the maximum for MQTT 3.1 only; 3.1.1 §3.1.3.1 lets the server
      // choose its limit, and max-client-id-length is ours.
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
          ConnectResult.IDENTIFIER_REJECTED);
      return;
    }
    if (clientId.isEmpty() && !cleanSession) {
      // MQTT 3.1.1 §3.1.3.1: a zero-length client id requires CleanSession = 1.
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
          ConnectResult.IDENTIFIER_REJECTED);
      return;
    }
    String token = connect.variableHeader().hasUserName() ? connect.payload().userName() : null;
    if (token == null || token.isEmpty()) {
      // ThingsBoard convention: the access token is the username; none → 0x04.
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_BAD_USER_NAME_OR_PASSWORD,
          ConnectResult.BAD_CREDENTIALS);
      return;
    }
    state = State.AUTHENTICATING;
    pause(Pause.AUTH);
    int keepAlive = connect.variableHeader().keepAliveTimeSeconds();
    try {
      context
          .registry()
          .findByToken(token)
          .whenCompleteAsync(
              (found, error) -> onAuthenticated(found, error, keepAlive),
              channelCtx().channel().eventLoop());
    } catch (RuntimeException e) {
      onAuthenticated(null, e, keepAlive);
    }
  }

  private void onAuthenticated(
      @Nullable Optional<Device> found, @Nullable Throwable error, int keepAlive) {
    if (state != State.AUTHENTICATING) {
      return; // closed while the lookup was running
    }
    if (error != null || found == null) {
      LOG.warn("{} credential lookup failed: {}", logPrefix, String.valueOf(error));
      refuse(
          MqttConnectReturnCode.CONNECTION_REFUSED_SERVER_UNAVAILABLE,
          ConnectResult.SERVER_UNAVAILABLE);
      return;
    }
    if (found.isEmpty()) {
      LOG.info("{} refused: unknown access token", logPrefix);
      refuse(MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED, ConnectResult.NOT_AUTHORIZED);
      return;
    }
    Device authenticated = found.get();
    device = authenticated;
    SessionRegistry.Registration registration =
        context.sessions().register(authenticated.id(), cleanSession, this);
    session = registration.state();
    publishes = new InboundPublishes(context, channelCtx(), authenticated, session, this);
    KeepAlive.apply(channelCtx().pipeline(), keepAlive);
    state = State.CONNECTED;
    context.metrics().connect(ConnectResult.ACCEPTED);
    channelCtx()
        .writeAndFlush(
            MqttMessageBuilders.connAck()
                .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                .sessionPresent(registration.sessionPresent())
                .build());
    LOG.debug("{} connected as device {}", logPrefix, authenticated.id());
    if (context.storageOverloaded().getAsBoolean()) {
      pause(Pause.STORAGE);
    }
    while (!queuedBeforeConnack.isEmpty() && state == State.CONNECTED) {
      MqttMessage queued = queuedBeforeConnack.pollFirst();
      try {
        dispatch(queued);
      } finally {
        ReferenceCountUtil.release(queued);
      }
    }
    resume(Pause.AUTH);
  }

  private boolean queueBeforeConnack(MqttMessage message) {
    if (queuedBeforeConnack.size() >= context.config().maxQueuedBeforeConnack()) {
      reject(
          CloseReason.QUEUE_OVERFLOW,
          "more than {} packets before CONNACK",
          context.config().maxQueuedBeforeConnack());
      return false;
    }
    queuedBeforeConnack.addLast(message);
    return true;
  }

  private void releaseQueued() {
    MqttMessage queued;
    while ((queued = queuedBeforeConnack.pollFirst()) != null) {
      ReferenceCountUtil.release(queued);
    }
  }

  private void onSubscribe(MqttSubscribeMessage subscribe) {
    List<MqttQoS> granted = new ArrayList<>();
    for (MqttTopicSubscription subscription : subscribe.payload().topicSubscriptions()) {
      String filter = subscription.topicFilter();
      if (SubscriptionFilters.isAllowed(filter)) {
        MqttQoS qos = SubscriptionFilters.grantedQos(subscription.qualityOfService());
        session().subscriptions().put(filter, qos.value());
        granted.add(qos);
      } else {
        LOG.debug("{} subscription refused: {}", logPrefix, filter);
        granted.add(MqttQoS.FAILURE); // MQTT 3.1.1 §3.9.3: return code 0x80
      }
    }
    channelCtx()
        .writeAndFlush(
            MqttMessageBuilders.subAck()
                .packetId(subscribe.variableHeader().messageId())
                .addGrantedQoses(granted.toArray(new MqttQoS[0]))
                .build());
  }

  private void onUnsubscribe(MqttUnsubscribeMessage unsubscribe) {
    for (String filter : unsubscribe.payload().topics()) {
      session().subscriptions().remove(filter);
    }
    channelCtx()
        .writeAndFlush(
            MqttMessageBuilders.unsubAck()
                .packetId(unsubscribe.variableHeader().messageId())
                .build());
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
    if (event instanceof IdleStateEvent) {
      if (!pauses.isEmpty() && state == State.CONNECTED) {
        return; // we stopped reading, not the client: silence is ours
      }
      close(
          state == State.CONNECTED ? CloseReason.KEEP_ALIVE_TIMEOUT : CloseReason.CONNECT_TIMEOUT);
      return;
    }
    super.userEventTriggered(ctx, event);
  }

  @Override
  public void takeOver() {
    ChannelHandlerContext current = ctx;
    if (current != null) {
      current.channel().eventLoop().execute(() -> close(CloseReason.TAKEN_OVER));
    }
  }

  /** Storage pressure changed; called on this channel's event loop. */
  public void onStoragePressure(boolean overloaded) {
    assert channelCtx().executor().inEventLoop();
    if (state != State.CONNECTED) {
      return;
    }
    if (overloaded) {
      pause(Pause.STORAGE);
    } else {
      resume(Pause.STORAGE);
    }
  }

  /** Runs a task on this connection's event loop (no-op before the channel is active). */
  public void executeOnEventLoop(Runnable task) {
    ChannelHandlerContext current = ctx;
    if (current != null) {
      current.executor().execute(task);
    }
  }

  /** Closes this connection because the server is stopping. Any thread. */
  public void shutdown() {
    executeOnEventLoop(() -> close(CloseReason.SHUTDOWN));
  }

  void pause(Pause cause) {
    boolean first = pauses.isEmpty();
    if (pauses.add(cause)) {
      if (cause == Pause.WINDOW) {
        context.metrics().paused(PauseCause.WINDOW);
      } else if (cause == Pause.STORAGE) {
        context.metrics().paused(PauseCause.STORAGE);
      }
      if (first) {
        channelCtx().channel().config().setAutoRead(false);
      }
    }
  }

  void resume(Pause cause) {
    if (pauses.remove(cause) && pauses.isEmpty() && state != State.CLOSED) {
      channelCtx().channel().config().setAutoRead(true);
    }
  }

  /** Counts and logs (rate-limited) a bad input, then closes. */
  void reject(CloseReason reason, String format, Object... args) {
    if (state == State.CLOSED) {
      return;
    }
    // The prefix holds the client id: pass it as an argument, never inside the template, so that
    // a client id containing "{}" cannot shift the arguments.
    Object[] all = new Object[args.length + 2];
    all[0] = logPrefix;
    all[1] = reason.tag();
    System.arraycopy(args, 0, all, 2, args.length);
    REJECTIONS.warn("{} closing ({}): " + format, all);
    close(reason);
  }

  /** The one way this connection ends. Earlier acknowledgements are flushed first. */
  void close(CloseReason reason) {
    if (state == State.CLOSED) {
      return;
    }
    state = State.CLOSED;
    context.metrics().closed(reason);
    LOG.debug("{} closing: {}", logPrefix, reason);
    ChannelHandlerContext current = channelCtx();
    current.flush();
    current.close();
  }

  private void refuse(MqttConnectReturnCode code, ConnectResult result) {
    context.metrics().connect(result);
    LOG.info("{} CONNECT refused: {}", logPrefix, code);
    MqttConnAckMessage connAck =
        MqttMessageBuilders.connAck().returnCode(code).sessionPresent(false).build();
    ChannelHandlerContext current = channelCtx();
    state = State.CLOSED;
    context.metrics().closed(CloseReason.CONNECT_REFUSED);
    // MQTT 3.1.1 §3.2.2.3: after a non-zero CONNACK the server MUST close the connection.
    current.writeAndFlush(connAck).addListener(future -> current.close());
  }

  String logPrefix() {
    return logPrefix;
  }

  private ChannelHandlerContext channelCtx() {
    ChannelHandlerContext current = ctx;
    if (current == null) {
      throw new IllegalStateException("handler not active");
    }
    return current;
  }

  private InboundPublishes publishes() {
    InboundPublishes current = publishes;
    if (current == null) {
      throw new IllegalStateException("not connected");
    }
    return current;
  }

  private SessionRegistry.SessionState session() {
    SessionRegistry.SessionState current = session;
    if (current == null) {
      throw new IllegalStateException("not connected");
    }
    return current;
  }
}
