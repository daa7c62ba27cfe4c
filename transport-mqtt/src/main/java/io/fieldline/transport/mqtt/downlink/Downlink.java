package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.GatewayLink;
import io.fieldline.common.events.DeviceEvent.RpcSubscribed;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.MqttMetrics.DownlinkOutcome;
import io.fieldline.transport.mqtt.MqttMetrics.RpcOutcome;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.DownlinkMessage;
import io.fieldline.transport.mqtt.session.DownlinkState;
import io.fieldline.transport.mqtt.session.RpcDelivery;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.channel.ChannelHandlerContext;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connected session's side of the downlink, from {@link #start} (CONNACK sent) to {@link
 * #channelClosed}. It holds the session's {@link DownlinkState}: on start it takes what an earlier
 * connection of a kept session left (sent again first), listens to the device's events ({@link
 * DownlinkListener}) and, if the session is subscribed to server-side RPC, announces it so that
 * waiting requests are offered again; on close it stops listening and hands its messages back to
 * the session, which keeps or gives them up.
 *
 * <p><b>A gateway's session</b> also listens to each child the gateway's messages brought into it
 * ({@link #listen}, until {@link #forget} or the close), with the child's name in what it sends
 * ({@link DownlinkRoute#child}); the session's bounds are then the gateway's ({@code
 * gateway.max-queued}, {@code max-queued-bytes}, {@code max-pending-rpc}), shared by the gateway
 * and its children.
 *
 * <p>Confined to the channel's event loop, except {@link #hold}, {@link #send} and {@link #adopt},
 * which any thread may call and which hop to it.
 */
public final class Downlink implements DownlinkState.Holder {

  private static final Logger LOG = LoggerFactory.getLogger(Downlink.class);
  private static final LogThrottle ANNOUNCE_FAILURES = new LogThrottle();

  private final SessionContext context;
  private final Connection connection;
  private final ChannelHandlerContext ctx;
  private final Device device;
  private final SessionState session;
  private final DownlinkState state;
  private final ServerRpcs rpcs;
  private final Outbound outbound;
  private final DownlinkListener listener;
  private final MqttTransportConfig.Downlink bounds;
  // A gateway's children listened to, by the name the gateway knows them by.
  private final Map<String, Child> children = new HashMap<>();
  private DeviceEvents.@Nullable Subscription registration;
  private boolean closed;

  /** A child of a gateway's session listened to. */
  private record Child(
      DeviceId id, DownlinkListener listener, DeviceEvents.Subscription registration) {}

  /** The downlink of {@code device}'s session {@code session}, accepted on {@code connection}. */
  public Downlink(
      SessionContext context, Connection connection, Device device, SessionState session) {
    this.context = context;
    this.connection = connection;
    this.ctx = connection.ctx();
    this.device = device;
    this.session = session;
    this.state = session.downlink();
    // Read once per connection, like the publish path's role (PublishRouter).
    this.bounds =
        GatewayLink.isGateway(device)
            ? context.config().gateway().downlink(context.config().downlink())
            : context.config().downlink();
    this.rpcs = new ServerRpcs(connection, state, context.metrics(), device.id());
    this.outbound = new Outbound(connection, state, bounds, context.metrics(), rpcs);
    this.listener = listener(DownlinkRoute.device());
  }

  private DownlinkListener listener(DownlinkRoute route) {
    return new DownlinkListener(
        this, session, route, bounds, context.metrics(), connection.logPrefix());
  }

  /**
   * CONNACK was sent: messages left by an earlier connection of the session go out first, then the
   * device's events are heard.
   */
  public void start() {
    assert ctx.executor().inEventLoop();
    outbound.adopt(state.attach(this, context.metrics()));
    rpcs.resume();
    registration = context.events().subscribe(device.id(), listener);
    rpcSubscribed(); // a resumed session may have subscribed before
  }

  /**
   * The session (re)subscribed to server-side RPC — {@code v1/devices/me/rpc/request/+}, or a
   * gateway's {@code v1/gateway/rpc}: requests waiting for the device, or for the children the
   * session listens to, are offered again. Announces only what the session is subscribed to.
   */
  public void rpcSubscribed() {
    assert ctx.executor().inEventLoop();
    if (session.subscriptions().containsKey(DownlinkTopics.RPC_REQUEST_FILTER)) {
      announce(device.id());
    }
    if (session.subscriptions().containsKey(DownlinkTopics.GATEWAY_RPC)) {
      children.values().forEach(child -> announce(child.id()));
    }
  }

  /**
   * A gateway's session has the child {@code child} in use under {@code name}: its shared
   * attributes and server-side RPC are sent to the gateway from now on (replacing what the name was
   * listened to as before). The gateway itself named as its own child is not listened to twice.
   */
  public void listen(String name, DeviceId child) {
    assert ctx.executor().inEventLoop();
    if (closed || child.equals(device.id())) {
      return;
    }
    forget(name);
    DownlinkListener heard = listener(DownlinkRoute.child(name));
    children.put(name, new Child(child, heard, context.events().subscribe(child, heard)));
    context.metrics().gatewayChildrenListened(1);
    if (session.subscriptions().containsKey(DownlinkTopics.GATEWAY_RPC)) {
      announce(child); // requests that waited for the child are offered now
    }
  }

  /** The gateway let the child {@code name} go: nothing more of it is sent to the gateway. */
  public void forget(String name) {
    assert ctx.executor().inEventLoop();
    Child child = children.remove(name);
    if (child != null) {
      stopListening(child);
    }
  }

  private void stopListening(Child child) {
    child.listener().close();
    child.registration().close();
    context.metrics().gatewayChildrenListened(-1);
  }

  private void announce(DeviceId id) {
    context
        .events()
        .publish(new RpcSubscribed(id))
        .exceptionally(
            error -> {
              ANNOUNCE_FAILURES.warn(
                  LOG, "{} RPC subscription not announced: {}", connection.logPrefix(), error);
              return 0;
            });
  }

  /**
   * Sends the answer to one of the device's requests at {@code qos}, after what is queued.
   *
   * @return false if the session holds as much as it may (the answer is dropped and counted)
   */
  public boolean answer(String topic, byte[] payload, int qos) {
    assert ctx.executor().inEventLoop();
    DownlinkMessage message = new DownlinkMessage(topic, payload, qos, null);
    if (!hold(message)) {
      context.metrics().downlink(DownlinkOutcome.QUEUE_FULL);
      return false;
    }
    offer(message);
    return true;
  }

  /** Whether a PUBLISH of that size stays within the client's Maximum Packet Size. */
  public boolean fits(String topic, int payloadLength, int qos) {
    return outbound.fits(topic, payloadLength, qos);
  }

  /** A PUBACK from the device for one of the server's QoS 1 messages. */
  public void onPuback(int packetId, int reasonCode) {
    outbound.onPuback(packetId, reasonCode);
  }

  /** The socket takes writes again: queued messages go out. */
  public void onWritable() {
    outbound.drain();
  }

  /** Answers of the device to server-side RPC requests. */
  public ServerRpcs rpcs() {
    return rpcs;
  }

  /** The channel closed: no more events; the session keeps or gives up what is left. */
  public void channelClosed() {
    assert ctx.executor().inEventLoop();
    if (closed) {
      return;
    }
    closed = true;
    listener.close();
    DeviceEvents.Subscription current = registration;
    if (current != null) {
      current.close();
    }
    children.values().forEach(this::stopListening);
    children.clear();
    rpcs.close();
    state.detach(this, outbound.close());
  }

  @Override
  public void adopt(List<DownlinkMessage> messages) {
    if (messages.isEmpty()) {
      return;
    }
    try {
      ctx.executor()
          .execute(
              () -> {
                if (closed) {
                  state.detach(this, messages);
                } else {
                  outbound.adopt(messages);
                }
              });
    } catch (RejectedExecutionException stopping) {
      state.detach(this, messages);
    }
  }

  /** Counts {@code message} against the session's bound; false if it does not fit. Any thread. */
  boolean hold(DownlinkMessage message) {
    return outbound.hold(message);
  }

  /**
   * Hands a held message to the event loop, to be sent after those before it. Any thread.
   *
   * @return false if the event loop no longer runs (the message was released)
   */
  boolean send(DownlinkMessage message) {
    try {
      ctx.executor().execute(() -> offer(message));
      return true;
    } catch (RejectedExecutionException stopping) {
      state.release(message);
      return false;
    }
  }

  /**
   * Reports a request the session took but will never send as undelivered, from the event loop (not
   * from within the sender's own call). Any thread.
   */
  void refuse(RpcDelivery rpc, String reason) {
    Runnable report =
        () -> {
          if (rpc.giveUp(reason)) {
            context.metrics().rpc(RpcOutcome.UNDELIVERED);
          }
        };
    try {
      ctx.executor().execute(report);
    } catch (RejectedExecutionException stopping) {
      report.run();
    }
  }

  private void offer(DownlinkMessage message) {
    if (closed) {
      state.detach(this, List.of(message)); // taken just before the close: kept or given up
    } else {
      outbound.offer(message);
    }
  }
}
