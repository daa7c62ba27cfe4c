package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.Device;
import io.fieldline.common.events.DeviceEvent.RpcSubscribed;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.transport.mqtt.MqttMetrics.DownlinkOutcome;
import io.fieldline.transport.mqtt.MqttMetrics.RpcOutcome;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.DownlinkMessage;
import io.fieldline.transport.mqtt.session.DownlinkState;
import io.fieldline.transport.mqtt.session.RateLimitedLog;
import io.fieldline.transport.mqtt.session.RpcDelivery;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.channel.ChannelHandlerContext;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
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
 * <p>Confined to the channel's event loop, except {@link #hold}, {@link #send} and {@link #adopt},
 * which any thread may call and which hop to it.
 */
public final class Downlink implements DownlinkState.Holder {

  private static final Logger LOG = LoggerFactory.getLogger(Downlink.class);
  private static final RateLimitedLog ANNOUNCE_FAILURES =
      new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);

  private final SessionContext context;
  private final Connection connection;
  private final ChannelHandlerContext ctx;
  private final Device device;
  private final SessionState session;
  private final DownlinkState state;
  private final ServerRpcs rpcs;
  private final Outbound outbound;
  private final DownlinkListener listener;
  private DeviceEvents.@Nullable Subscription registration;
  private boolean closed;

  /** The downlink of {@code device}'s session {@code session}, accepted on {@code connection}. */
  public Downlink(
      SessionContext context, Connection connection, Device device, SessionState session) {
    this.context = context;
    this.connection = connection;
    this.ctx = connection.ctx();
    this.device = device;
    this.session = session;
    this.state = session.downlink();
    this.rpcs = new ServerRpcs(connection, state, context.metrics());
    this.outbound =
        new Outbound(connection, state, context.config().downlink(), context.metrics(), rpcs);
    this.listener =
        new DownlinkListener(
            this, session, context.config().downlink(), context.metrics(), connection.logPrefix());
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
    if (session.subscriptions().containsKey(DownlinkTopics.RPC_REQUEST_FILTER)) {
      rpcSubscribed(); // a resumed session subscribed before
    }
  }

  /** The session (re)subscribed to server-side RPC: requests waiting for it are offered again. */
  public void rpcSubscribed() {
    context
        .events()
        .publish(new RpcSubscribed(device.id()))
        .exceptionally(
            error -> {
              ANNOUNCE_FAILURES.warn(
                  "{} RPC subscription not announced: {}", connection.logPrefix(), error);
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
