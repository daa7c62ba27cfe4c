package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttMetrics.DownlinkOutcome;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.DownlinkMessage;
import io.fieldline.transport.mqtt.session.DownlinkState;
import io.fieldline.transport.mqtt.session.Negotiated;
import io.fieldline.transport.mqtt.session.RpcDelivery;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's queue of messages for its device, and the rules they leave it by.
 *
 * <ul>
 *   <li><b>Order.</b> One FIFO queue: messages are written in the order they were taken (MQTT 3.1.1
 *       §4.6), QoS 0 and 1 alike.
 *   <li><b>Window.</b> At most {@code downlink.max-inflight} QoS 1 messages are unacknowledged
 *       (MQTT 5: at most the client's Receive Maximum, §4.9); the next one waits for a PUBACK.
 *   <li><b>Writability.</b> Nothing is written while the socket's outbound buffer is above {@code
 *       outbound-high-water}: a client that does not read makes messages wait here, within the
 *       session's bound, not in Netty's buffer.
 *   <li><b>Packet size.</b> A message larger than the client's Maximum Packet Size (MQTT 5
 *       §3.1.2.11.4) is never written: it is given up ({@code downlink{outcome=too_large}}).
 *   <li><b>Retransmission.</b> MQTT 3.1.1: a QoS 1 message not acknowledged within {@code
 *       downlink.retransmit-interval} is written again with DUP while the connection lasts. MQTT 5
 *       forbids that (§4.4): there, as for every kept session, unacknowledged messages are written
 *       again (DUP, same packet id) only when the session resumes on a new connection.
 * </ul>
 *
 * <p>A message leaves the session's bound ({@link DownlinkState}) once written at QoS 0,
 * acknowledged at QoS 1, or given up. Confined to the channel's event loop.
 */
public final class Outbound {

  private static final Logger LOG = LoggerFactory.getLogger(Outbound.class);
  private static final LogThrottle TOO_LARGE = new LogThrottle();

  private final Connection connection;
  private final ChannelHandlerContext ctx;
  private final DownlinkState state;
  private final MqttTransportConfig.Downlink config;
  private final MqttMetrics metrics;
  private final Negotiated negotiated;
  private final ServerRpcs rpcs;
  private final int window;
  private final ArrayDeque<DownlinkMessage> queue = new ArrayDeque<>();
  // QoS 1 messages written and not yet acknowledged, by packet id, oldest first.
  private final Map<Integer, DownlinkMessage> inflight = new LinkedHashMap<>();
  private @Nullable ScheduledFuture<?> retransmit;

  Outbound(
      Connection connection,
      DownlinkState state,
      MqttTransportConfig.Downlink config,
      MqttMetrics metrics,
      ServerRpcs rpcs) {
    this.connection = connection;
    this.ctx = connection.ctx();
    this.state = state;
    this.config = config;
    this.metrics = metrics;
    this.negotiated = connection.negotiated();
    this.rpcs = rpcs;
    this.window =
        negotiated.mqtt5()
            ? Math.min(config.maxInflight(), negotiated.clientReceiveMaximum())
            : config.maxInflight();
  }

  /** Counts {@code message} against the session's bound; false if it does not fit. Any thread. */
  boolean hold(DownlinkMessage message) {
    return state.tryHold(message, config.maxQueued(), config.maxQueuedBytes());
  }

  /** Queues a held message behind the others and writes what may be written. */
  void offer(DownlinkMessage message) {
    assert ctx.executor().inEventLoop();
    queue.add(message);
    drain();
  }

  /**
   * Queues messages an earlier connection of the session left (oldest first) ahead of everything
   * else: those whose PUBLISH reached the socket are written again with their packet id and DUP
   * (MQTT 3.1.1 §4.4, MQTT 5 §4.4); those whose write failed go out as if for the first time.
   */
  void adopt(List<DownlinkMessage> messages) {
    assert ctx.executor().inEventLoop();
    for (int i = messages.size() - 1; i >= 0; i--) {
      DownlinkMessage message = messages.get(i);
      if (message.packetId() != 0 && inUse(message.packetId())) {
        // Only when a takeover raced its predecessor's close: sent again as a new message.
        message.packetId(0);
      }
      queue.addFirst(message);
    }
    drain();
  }

  /** Writes queued messages while the window has room and the socket takes them. */
  void drain() {
    assert ctx.executor().inEventLoop();
    boolean wrote = false;
    while (!queue.isEmpty() && ctx.channel().isWritable()) {
      DownlinkMessage next = queue.peek();
      if (next.qos() == 1 && inflight.size() >= window) {
        break;
      }
      queue.poll();
      if (deliverable(next)) {
        write(next);
        wrote = true;
      }
    }
    if (wrote) {
      ctx.flush();
    }
  }

  /**
   * A PUBACK from the device: its message leaves the session.
   *
   * @param reasonCode MQTT 5 reason code (0x00 for MQTT 3.1.1)
   */
  void onPuback(int packetId, int reasonCode) {
    assert ctx.executor().inEventLoop();
    DownlinkMessage message = inflight.remove(packetId);
    if (message == null) {
      return; // a late or duplicate PUBACK: nothing waits for it
    }
    state.release(message);
    metrics.downlink(DownlinkOutcome.ACKNOWLEDGED);
    if (message.rpc() != null) {
      rpcs.onAcknowledged(message, reasonCode);
    }
    if (inflight.isEmpty()) {
      cancelRetransmit();
    }
    drain();
  }

  /**
   * Whether a PUBLISH of {@code payloadLength} bytes on {@code topic} stays within the client's
   * Maximum Packet Size.
   */
  boolean fits(String topic, int payloadLength, int qos) {
    return negotiated.clientAccepts(packetSize(topic, payloadLength, qos));
  }

  /** The connection closed: its messages, oldest first, for the session to keep or give up. */
  List<DownlinkMessage> close() {
    assert ctx.executor().inEventLoop();
    cancelRetransmit();
    List<DownlinkMessage> held = new ArrayList<>(inflight.values());
    held.addAll(queue);
    inflight.clear();
    queue.clear();
    return held;
  }

  private boolean deliverable(DownlinkMessage message) {
    long size = packetSize(message.topic(), message.payload().length, message.qos());
    if (!negotiated.clientAccepts(size)) {
      TOO_LARGE.warn(
          LOG,
          "{} message of {} bytes on {} not sent: above the client's maximum packet size",
          connection.logPrefix(),
          size,
          message.topic());
      state.giveUp(
          message,
          DownlinkOutcome.TOO_LARGE,
          "the request of "
              + size
              + " bytes exceeds the client's maximum packet size of "
              + negotiated.clientMaximumPacketSize()
              + " bytes");
      return false;
    }
    RpcDelivery rpc = message.rpc();
    if (rpc != null
        && !message.written()
        && rpc.rpc().expirationTime() > 0
        && System.currentTimeMillis() > rpc.rpc().expirationTime()) {
      state.giveUp(message, DownlinkOutcome.EXPIRED, "the request expired before it was sent");
      return false;
    }
    return true;
  }

  private void write(DownlinkMessage message) {
    // DUP only for the same packet id again: a message given a new id (see adopt) is a new one.
    boolean dup = message.written() && message.packetId() != 0;
    if (message.qos() == 1) {
      if (message.packetId() == 0) {
        message.packetId(freePacketId());
      }
      inflight.put(message.packetId(), message);
      message.lastSentNanos(now());
      scheduleRetransmit();
    }
    ChannelFuture future = ctx.write(publish(message, dup));
    metrics.downlink(dup ? DownlinkOutcome.RETRANSMITTED : DownlinkOutcome.SENT);
    if (message.qos() == 0) {
      state.release(message); // its bytes are Netty's now, bounded by the water marks
    }
    if (!message.written()) {
      future.addListener(done -> written(message, done.isSuccess()));
    }
  }

  // Until a write succeeds, each is the first: a QoS 1 message whose write failed stays in flight,
  // for the session's next connection, and is reported sent only when a write reaches the socket.
  private void written(DownlinkMessage message, boolean success) {
    if (success) {
      message.markWritten();
    }
    if (message.rpc() != null) {
      rpcs.onWritten(message, success);
    }
  }

  private int freePacketId() {
    int id;
    do {
      id = state.nextPacketId();
    } while (inUse(id));
    return id;
  }

  private boolean inUse(int packetId) {
    if (inflight.containsKey(packetId)) {
      return true;
    }
    for (DownlinkMessage queued : queue) {
      if (queued.packetId() == packetId) {
        return true;
      }
    }
    return false;
  }

  // MQTT 3.1.1 only: MQTT 5 §4.4 allows resending only on a new connection.
  private void scheduleRetransmit() {
    if (negotiated.mqtt5() || retransmit != null) {
      return;
    }
    retransmit =
        ctx.executor()
            .schedule(
                this::retransmit, config.retransmitInterval().toNanos(), TimeUnit.NANOSECONDS);
  }

  private void retransmit() {
    retransmit = null;
    if (inflight.isEmpty() || !ctx.channel().isActive()) {
      return;
    }
    long interval = config.retransmitInterval().toNanos();
    long now = now();
    long nextDue = Long.MAX_VALUE;
    boolean wrote = false;
    for (DownlinkMessage message : inflight.values()) {
      long age = now - message.lastSentNanos();
      if (age >= interval) {
        // Not while the client is not reading: resending would only pile up more.
        if (ctx.channel().isWritable()) {
          message.lastSentNanos(now);
          ctx.write(publish(message, true));
          metrics.downlink(DownlinkOutcome.RETRANSMITTED);
          wrote = true;
        }
        nextDue = Math.min(nextDue, interval);
      } else {
        nextDue = Math.min(nextDue, interval - age);
      }
    }
    if (wrote) {
      ctx.flush();
    }
    retransmit = ctx.executor().schedule(this::retransmit, nextDue, TimeUnit.NANOSECONDS);
  }

  private void cancelRetransmit() {
    ScheduledFuture<?> scheduled = retransmit;
    if (scheduled != null) {
      scheduled.cancel(false);
      retransmit = null;
    }
  }

  private long now() {
    return ctx.executor().ticker().nanoTime();
  }

  private long packetSize(String topic, int payloadLength, int qos) {
    // Topic length 2 + topic, packet id 2 at QoS 1, MQTT 5 property length 1 (no properties).
    long remaining =
        2L
            + ByteBufUtil.utf8Bytes(topic)
            + (qos > 0 ? 2 : 0)
            + (negotiated.mqtt5() ? 1 : 0)
            + payloadLength;
    int lengthBytes = remaining < 128 ? 1 : remaining < 16_384 ? 2 : remaining < 2_097_152 ? 3 : 4;
    return 1 + lengthBytes + remaining;
  }

  private static MqttPublishMessage publish(DownlinkMessage message, boolean dup) {
    MqttQoS qos = MqttQoS.valueOf(message.qos());
    return new MqttPublishMessage(
        new MqttFixedHeader(MqttMessageType.PUBLISH, dup, qos, false, 0),
        new MqttPublishVariableHeader(
            message.topic(), message.packetId(), MqttProperties.NO_PROPERTIES),
        Unpooled.wrappedBuffer(message.payload()));
  }
}
