package io.fieldline.transport.mqtt;

import io.fieldline.common.device.Device;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.transport.mqtt.connect.ConnectHandshake;
import io.fieldline.transport.mqtt.downlink.Downlink;
import io.fieldline.transport.mqtt.pipeline.DecodeBudget;
import io.fieldline.transport.mqtt.pipeline.PreConnackLimit;
import io.fieldline.transport.mqtt.provision.ProvisionSession;
import io.fieldline.transport.mqtt.publish.InboundPublishes;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.fieldline.transport.mqtt.subscribe.Subscriptions;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttSubscribeMessage;
import io.netty.handler.codec.mqtt.MqttUnsubscribeMessage;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One MQTT connection's pipeline stage: every decoded packet is dispatched by type to the path that
 * owns it — CONNECT to {@link ConnectHandshake}, PUBLISH and PUBREL to {@link InboundPublishes},
 * SUBSCRIBE and UNSUBSCRIBE to {@link Subscriptions}, PUBACK to the session's {@link Downlink} —
 * and PINGREQ and DISCONNECT are answered here. A provisioning session (user name or client id
 * {@code provision}) has its PUBLISH, PUBREL, SUBSCRIBE and UNSUBSCRIBE served by its {@link
 * ProvisionSession} instead. Packets that fail to decode, packets out of order and the idle timer
 * end in the {@link Connection}, the connection's lifecycle that every path shares. The stage
 * releases every packet it is given.
 *
 * <p>Confined to the channel's event loop; one instance per channel (not sharable). The methods
 * {@link MqttServer} calls from other threads ({@link #shutdown}, {@link #executeOnEventLoop}) hop
 * to it.
 */
public final class MqttSessionHandler extends ChannelInboundHandlerAdapter
    implements ConnectHandshake.Listener {

  private static final Logger LOG = LoggerFactory.getLogger(MqttSessionHandler.class);

  private final SessionContext context;
  // Set when the channel becomes active; a connected session's paths once CONNACK is sent.
  private volatile @Nullable Connection connection;
  private @Nullable ConnectHandshake handshake;
  private @Nullable InboundPublishes publishes;
  private @Nullable Subscriptions subscriptions;
  private @Nullable Downlink downlink;
  private @Nullable ProvisionSession provision;

  /** The stage of one new channel; {@code context} is shared by every connection of the server. */
  public MqttSessionHandler(SessionContext context) {
    this.context = context;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    Connection current = new Connection(ctx, context.metrics());
    handshake = new ConnectHandshake(context, current, this);
    connection = current;
    context.metrics().connectionOpened();
    current.startConnectDeadline(context.config().connectTimeout());
    super.channelActive(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    context.metrics().connectionClosed();
    Connection current = connection;
    if (current != null) {
      boolean wasConnected = current.isConnected();
      current.channelClosed();
      Downlink sessionDownlink = downlink;
      if (sessionDownlink != null) {
        // Before the registry hears of the close: what the session keeps is in it by then.
        sessionDownlink.channelClosed();
      }
      ProvisionSession provisioning = provision;
      if (provisioning != null) {
        provisioning.channelClosed();
      }
      handshake().onChannelClosed();
      if (wasConnected) {
        LOG.debug("{} connection closed", current.logPrefix());
      }
    }
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof MqttMessage message)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    try {
      Connection.State state = connection().state();
      if (state == Connection.State.CLOSED) {
        return;
      }
      if (message.decoderResult().isFailure()) {
        onDecoderFailure(message.decoderResult().cause());
        return;
      }
      if (state == Connection.State.AUTHENTICATING) {
        // Reading is paused and flow control holds what follows CONNECT until CONNACK: a packet
        // here means a stage asked for a read while authenticating.
        connection().reject(CloseReason.PROTOCOL, "packet delivered before CONNACK");
        return;
      }
      dispatch(message);
    } finally {
      ReferenceCountUtil.release(message);
    }
  }

  private void dispatch(MqttMessage message) {
    ProvisionSession provisioning = provision;
    if (provisioning != null && dispatchProvisioning(provisioning, message)) {
      return;
    }
    switch (message.fixedHeader().messageType()) {
      case CONNECT -> handshake().onConnect((MqttConnectMessage) message);
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
          subscriptions().onSubscribe((MqttSubscribeMessage) message);
        }
      }
      case UNSUBSCRIBE -> {
        if (requireConnected()) {
          subscriptions().onUnsubscribe((MqttUnsubscribeMessage) message);
        }
      }
      case PINGREQ -> {
        if (requireConnected()) {
          // MQTT 3.1.1 §3.12.4: the server MUST answer PINGREQ with PINGRESP.
          connection().ctx().writeAndFlush(MqttMessage.PINGRESP);
        }
      }
      case DISCONNECT -> handshake().onDisconnect(message);
      case PUBACK -> {
        if (requireConnected()) {
          MqttMessageIdVariableHeader header =
              (MqttMessageIdVariableHeader) message.variableHeader();
          // MQTT 5 §3.4.2.1: a PUBACK may carry a reason code; 3.1.1 has none (success).
          int reasonCode =
              header instanceof MqttPubReplyMessageVariableHeader reply
                  ? Byte.toUnsignedInt(reply.reasonCode())
                  : 0;
          downlink().onPuback(header.messageId(), reasonCode);
        }
      }
      // Fieldline never sends QoS 2 to devices, so these are ignored.
      case PUBREC, PUBCOMP -> requireConnected();
      // AUTH (MQTT 5 enhanced authentication is not offered) and server-only packets.
      default ->
          connection()
              .reject(
                  CloseReason.PROTOCOL,
                  "unexpected {} packet",
                  message.fixedHeader().messageType().name());
    }
  }

  /**
   * Serves a provisioning session's packet, or returns false for the ones served as for any session
   * (CONNECT, PINGREQ, DISCONNECT, and the packets a client may not send).
   */
  private boolean dispatchProvisioning(ProvisionSession provisioning, MqttMessage message) {
    switch (message.fixedHeader().messageType()) {
      case PUBLISH -> provisioning.onPublish((MqttPublishMessage) message);
      case PUBREL ->
          provisioning.onPubrel(
              ((MqttMessageIdVariableHeader) message.variableHeader()).messageId());
      case SUBSCRIBE -> provisioning.onSubscribe((MqttSubscribeMessage) message);
      case UNSUBSCRIBE -> provisioning.onUnsubscribe((MqttUnsubscribeMessage) message);
      // The client's acknowledgement of the answer: nothing waits for it.
      case PUBACK, PUBREC, PUBCOMP -> {}
      default -> {
        return false;
      }
    }
    return true;
  }

  private boolean requireConnected() {
    if (!connection().isConnected()) {
      // MQTT 3.1.1 §3.1.0: the first packet from the client MUST be CONNECT.
      connection().close(CloseReason.PROTOCOL);
      return false;
    }
    return true;
  }

  private void onDecoderFailure(Throwable cause) {
    if (cause instanceof TooLongFrameException) {
      connection()
          .reject(
              CloseReason.TOO_LARGE,
              "packet larger than {} bytes",
              context.config().maxPacketSize());
    } else if (!handshake().onDecoderFailure(cause)) {
      connection()
          .reject(
              CloseReason.MALFORMED, "malformed packet: {}", String.valueOf(cause.getMessage()));
    }
  }

  @Override
  public void sessionStarted(Device device, SessionState state) {
    Downlink started = new Downlink(context, connection(), device, state);
    downlink = started;
    publishes = new InboundPublishes(context, connection(), device, state, started);
    subscriptions = new Subscriptions(connection(), state, started);
    started.start();
  }

  @Override
  public void provisioningStarted(DeviceProvisioning provisioning) {
    ProvisionSession started =
        new ProvisionSession(
            connection(),
            provisioning,
            context.config().connectTimeout(),
            context.config().connectTimeout());
    provision = started;
    started.start();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
    if (event instanceof IdleStateEvent) {
      connection().onIdle();
      return;
    }
    if (event == DecodeBudget.TOO_LARGE) {
      connection()
          .reject(
              CloseReason.TOO_LARGE,
              "packet larger than {} bytes",
              context.config().maxPacketSize());
      return;
    }
    if (event == DecodeBudget.EXCEEDED) {
      connection()
          .reject(
              CloseReason.MALFORMED,
              "a packet's inner lengths run past its end ({} bytes at most)",
              context.config().maxPacketSize());
      return;
    }
    if (event == PreConnackLimit.OVERFLOW) {
      connection()
          .reject(
              CloseReason.QUEUE_OVERFLOW,
              "more than {} packets before CONNACK",
              context.config().maxQueuedBeforeConnack());
      return;
    }
    super.userEventTriggered(ctx, event);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    boolean writable = ctx.channel().isWritable();
    connection().onWritabilityChanged(writable, context.config().outboundStallTimeout());
    Downlink sessionDownlink = downlink;
    if (writable && sessionDownlink != null && connection().isConnected()) {
      sessionDownlink.onWritable();
    }
    super.channelWritabilityChanged(ctx);
  }

  /** Storage pressure changed; called on this channel's event loop. */
  public void onStoragePressure(boolean overloaded) {
    connection().onStoragePressure(overloaded);
  }

  /** Runs a task on this connection's event loop (no-op before the channel is active). */
  void executeOnEventLoop(Runnable task) {
    Connection current = connection;
    if (current != null) {
      current.ctx().executor().execute(task);
    }
  }

  /** Closes this connection because the server is stopping. Any thread. */
  void shutdown() {
    executeOnEventLoop(() -> connection().close(CloseReason.SHUTDOWN));
  }

  private Connection connection() {
    Connection current = connection;
    if (current == null) {
      throw new IllegalStateException("handler not active");
    }
    return current;
  }

  private ConnectHandshake handshake() {
    ConnectHandshake current = handshake;
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

  private Downlink downlink() {
    Downlink current = downlink;
    if (current == null) {
      throw new IllegalStateException("not connected");
    }
    return current;
  }

  private Subscriptions subscriptions() {
    Subscriptions current = subscriptions;
    if (current == null) {
      throw new IllegalStateException("not connected");
    }
    return current;
  }
}
