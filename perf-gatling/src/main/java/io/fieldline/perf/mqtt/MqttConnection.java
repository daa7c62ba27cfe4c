package io.fieldline.perf.mqtt;

import io.fieldline.perf.mqtt.MqttRunStats.Failure;
import io.gatling.core.session.Session;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;
import scala.Option;

/**
 * One virtual user's MQTT 3.1.1 connection, over TLS when the protocol says so: CONNECT/CONNACK,
 * PUBLISH QoS 0/1 with PUBACK tracking by packet id, SUBSCRIBE/SUBACK, inbound PUBLISHes for {@code
 * awaitMessage}, PINGREQ on writer idle, and DISCONNECT. Stored in the Gatling session under {@link
 * #ATTRIBUTE}.
 *
 * <p>Confined to the user's event loop: the channel is registered on {@code session.eventLoop()}
 * and Gatling runs the user's actions there, so no field needs synchronization.
 */
final class MqttConnection {

  static final String ATTRIBUTE = "gatling.fieldline.mqtt.connection";

  /** When {@code drop()} closed the user's previous connection (epoch ms, a Long). */
  static final String DROPPED_AT = "gatling.fieldline.mqtt.droppedAt";

  /** Completion of CONNECT (on the loop). */
  interface ConnectCallback {
    void connected(MqttConnection connection, long latencyNanos);

    void failed(Failure failure, String message);
  }

  /** Completion of a request that the broker acknowledges by packet id (on the loop). */
  interface AckCallback {
    void acked(MqttMessage ack, long latencyNanos);

    void failed(Failure failure, String message);
  }

  /** Completion of {@code awaitMessage} (on the loop). */
  interface InboundCallback {
    void received(InboundMessage message, long latencyNanos);

    void timedOut();
  }

  /** A PUBLISH the broker sent to this client. */
  record InboundMessage(String topic, byte[] payload) {}

  private enum State {
    CONNECTING,
    CONNECTED,
    CLOSED
  }

  private static final class Pending {
    final AckCallback callback;
    final long startNanos;
    final long sequence;
    @Nullable ScheduledFuture<?> timeout;

    Pending(AckCallback callback, long startNanos, long sequence) {
      this.callback = callback;
      this.startNanos = startNanos;
      this.sequence = sequence;
    }
  }

  private final EventLoop loop;
  private final MqttProtocol protocol;
  private final MqttRunStats stats;
  private final AckLedger ledger;
  private final IntObjectHashMap<Pending> pending = new IntObjectHashMap<>(4);
  private final ArrayDeque<InboundMessage> inbound = new ArrayDeque<>();
  private @Nullable Channel channel;
  private State state = State.CONNECTING;
  private @Nullable ConnectCallback connectCallback;
  private @Nullable ScheduledFuture<?> connectTimeout;
  private long connectStartNanos;
  private int lastPacketId;
  private @Nullable InboundCallback waiter;
  private long waiterStartNanos;
  private @Nullable ScheduledFuture<?> waiterTimeout;

  /** Completion of a QoS 1 RPC answer: counted; a failure is already counted by kind. */
  private final AckCallback answerAcked =
      new AckCallback() {
        @Override
        public void acked(MqttMessage ack, long latencyNanos) {
          stats.rpcAnswerAcked();
        }

        @Override
        public void failed(Failure failure, String message) {
          // track() and closed() count the failure in stats.failures
        }
      };

  /** QoS of the answers to RPC requests once {@code respondToRpc()} installed the responder. */
  private @Nullable MqttQoS rpcAnswerQos;

  /** Epoch ms of the drop this connection replaces (0: none); cleared by the first PUBACK. */
  private long droppedAtMillis;

  private MqttConnection(EventLoop loop, MqttProtocol protocol, String username) {
    this.loop = loop;
    this.protocol = protocol;
    this.stats = protocol.stats();
    this.ledger = new AckLedger(username, System.currentTimeMillis());
  }

  static @Nullable MqttConnection of(Session session) {
    Option<Object> value = session.attributes().get(ATTRIBUTE);
    return value.isDefined() ? (MqttConnection) value.get() : null;
  }

  /**
   * Opens a connection of device {@code device} (the Gatling user id) to {@code broker} on {@code
   * loop}, completes the TLS handshake when the protocol has TLS, and sends CONNECT; the callback
   * fires exactly once.
   */
  static MqttConnection open(
      MqttComponents components,
      long device,
      InetSocketAddress broker,
      @Nullable InetSocketAddress source,
      EventLoop loop,
      String clientId,
      String username,
      @Nullable String password,
      long droppedAtMillis,
      ConnectCallback callback) {
    assert loop.inEventLoop();
    MqttProtocol protocol = components.protocol();
    MqttConnection connection = new MqttConnection(loop, protocol, username);
    connection.droppedAtMillis = droppedAtMillis;
    protocol.stats().connecting();
    connection.connectCallback = callback;
    connection.connectStartNanos = System.nanoTime();
    connection.connectTimeout =
        loop.schedule(
            () ->
                connection.failConnect(
                    Failure.TIMEOUT, "no CONNACK within " + protocol.connectTimeout()),
            protocol.connectTimeout().toNanos(),
            TimeUnit.NANOSECONDS);
    int keepAlive = (int) protocol.keepAlive().toSeconds();
    MqttTls tls = protocol.tls();
    Bootstrap bootstrap =
        components
            .bootstrap()
            .group(loop)
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (tls != null) {
                      ch.pipeline()
                          .addLast(
                              "tls",
                              tls.newHandler(
                                  ch.alloc(), protocol.host(), device, protocol.connectTimeout()));
                    }
                    ch.pipeline().addLast("encoder", MqttEncoder.INSTANCE);
                    ch.pipeline().addLast("decoder", new MqttDecoder());
                    if (keepAlive > 0) {
                      ch.pipeline().addLast("idle", new IdleStateHandler(0, keepAlive, 0));
                    }
                    ch.pipeline().addLast("client", new MqttClientHandler(connection));
                  }
                });
    ChannelFuture connect =
        source == null ? bootstrap.connect(broker) : bootstrap.connect(broker, source);
    connection.channel = connect.channel();
    MqttMessageBuilders.ConnectBuilder packet =
        MqttMessageBuilders.connect()
            .protocolVersion(MqttVersion.MQTT_3_1_1)
            .clientId(clientId)
            .cleanSession(protocol.cleanSession())
            .keepAlive(keepAlive)
            .hasUser(true)
            .username(username);
    if (password != null) {
      packet.hasPassword(true).password(password.getBytes(StandardCharsets.UTF_8));
    }
    connect.addListener(
        future -> {
          if (!future.isSuccess()) {
            connection.failConnect(Failure.REFUSED, "TCP connect failed: " + future.cause());
            return;
          }
          SslHandler ssl = connect.channel().pipeline().get(SslHandler.class);
          if (ssl == null) {
            connect.channel().writeAndFlush(packet.build());
          } else {
            connection.afterHandshake(ssl, packet);
          }
        });
    return connection;
  }

  // CONNECT goes out once the handshake is done, as a TLS device sends it; the handshake's own
  // time (TCP connected → handshake complete) is recorded apart from TCP connect → CONNACK.
  private void afterHandshake(SslHandler ssl, MqttMessageBuilders.ConnectBuilder packet) {
    long tcpConnectedNanos = System.nanoTime();
    ssl.handshakeFuture()
        .addListener(
            handshake -> {
              if (!handshake.isSuccess()) {
                failConnect(Failure.HANDSHAKE, "TLS handshake failed: " + handshake.cause());
                return;
              }
              SSLSession session = ssl.engine().getSession();
              stats.handshaken(
                  System.nanoTime() - tcpConnectedNanos,
                  session.getProtocol() + " " + session.getCipherSuite());
              Channel ch = channel;
              if (state == State.CONNECTING && ch != null) {
                ch.writeAndFlush(packet.build());
              }
            });
  }

  boolean isConnected() {
    return state == State.CONNECTED;
  }

  AckLedger ledger() {
    return ledger;
  }

  /** Reserves the next message number of this connection (see {@link AckLedger}). */
  long nextSequence() {
    return ledger.nextSequence();
  }

  /**
   * Sends a PUBLISH. QoS 1 completes on its PUBACK (KO on timeout or close), QoS 0 when the bytes
   * are written.
   */
  void publish(String topic, MqttQoS qos, byte[] payload, long sequence, AckCallback callback) {
    assert loop.inEventLoop();
    Channel ch = channel;
    if (state != State.CONNECTED || ch == null) {
      stats.failed(Failure.NOT_CONNECTED);
      callback.failed(Failure.NOT_CONNECTED, "not connected");
      return;
    }
    long start = System.nanoTime();
    if (qos == MqttQoS.AT_MOST_ONCE) {
      stats.sent();
      ch.writeAndFlush(
              MqttMessageBuilders.publish()
                  .topicName(topic)
                  .qos(qos)
                  .retained(false)
                  .payload(Unpooled.wrappedBuffer(payload))
                  .build())
          .addListener(
              f -> {
                if (f.isSuccess()) {
                  long latency = System.nanoTime() - start;
                  ledger.acked(sequence);
                  stats.acked(latency);
                  callback.acked(
                      new MqttMessage(
                          new MqttFixedHeader(
                              MqttMessageType.PUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0)),
                      latency);
                } else {
                  stats.failed(Failure.WRITE_FAILED);
                  callback.failed(Failure.WRITE_FAILED, "write failed: " + f.cause());
                }
              });
      return;
    }
    int packetId = track(callback, start, sequence);
    if (packetId < 0) {
      return;
    }
    stats.sent();
    ch.writeAndFlush(
        MqttMessageBuilders.publish()
            .topicName(topic)
            .qos(qos)
            .retained(false)
            .messageId(packetId)
            .payload(Unpooled.wrappedBuffer(payload))
            .build());
  }

  /** Sends a SUBSCRIBE; completes on its SUBACK (KO on timeout, close or refusal 0x80). */
  void subscribe(String topicFilter, MqttQoS qos, AckCallback callback) {
    assert loop.inEventLoop();
    Channel ch = channel;
    if (state != State.CONNECTED || ch == null) {
      stats.failed(Failure.NOT_CONNECTED);
      callback.failed(Failure.NOT_CONNECTED, "not connected");
      return;
    }
    int packetId = track(callback, System.nanoTime(), -1);
    if (packetId >= 0) {
      ch.writeAndFlush(
          MqttMessageBuilders.subscribe()
              .addSubscription(qos, topicFilter)
              .messageId(packetId)
              .build());
    }
  }

  /**
   * From now on, answers every RPC request of the server at once with {@link RpcResponder} (QoS
   * {@code answerQos}; a QoS 1 answer is tracked to its PUBACK like any publish) instead of
   * queueing it for {@code awaitMessage}. Call before subscribing, so that no request finds no
   * responder.
   */
  void respondToRpc(MqttQoS answerQos) {
    assert loop.inEventLoop();
    rpcAnswerQos = answerQos;
  }

  /** Completes with the oldest inbound PUBLISH not yet taken, waiting up to {@code timeout}. */
  void awaitMessage(long timeoutNanos, InboundCallback callback) {
    assert loop.inEventLoop();
    InboundMessage queued = inbound.poll();
    if (queued != null) {
      callback.received(queued, 0);
      return;
    }
    if (waiter != null || state == State.CLOSED) {
      callback.timedOut();
      return;
    }
    waiter = callback;
    waiterStartNanos = System.nanoTime();
    waiterTimeout =
        loop.schedule(
            () -> {
              InboundCallback w = waiter;
              waiter = null;
              if (w != null) {
                w.timedOut();
              }
            },
            timeoutNanos,
            TimeUnit.NANOSECONDS);
  }

  /** Sends DISCONNECT (if connected) and closes; idempotent. Safe from any thread. */
  void disconnect() {
    if (!loop.inEventLoop()) {
      loop.execute(this::disconnect);
      return;
    }
    Channel ch = channel;
    if (state == State.CONNECTED && ch != null && ch.isActive()) {
      ch.writeAndFlush(
              new MqttMessage(
                  new MqttFixedHeader(
                      MqttMessageType.DISCONNECT, false, MqttQoS.AT_MOST_ONCE, false, 0)))
          .addListener(f -> ch.close());
    } else if (ch != null) {
      ch.close();
    }
    closed(Failure.CLOSED, "disconnected by the client");
  }

  /**
   * Closes the socket without DISCONNECT, as a network outage would (the broker sees the TCP close,
   * not an MQTT goodbye); publishes in flight fail as closed. Safe from any thread.
   */
  void drop() {
    if (!loop.inEventLoop()) {
      loop.execute(this::drop);
      return;
    }
    Channel ch = channel;
    if (ch != null) {
      ch.close();
    }
    if (state != State.CLOSED) {
      stats.dropped();
    }
    closed(Failure.CLOSED, "dropped by the client (no DISCONNECT)");
  }

  // ---- called by MqttClientHandler, on the loop ----

  void onConnAck(MqttConnAckMessage ack) {
    ConnectCallback callback = connectCallback;
    if (callback == null || state != State.CONNECTING) {
      return;
    }
    MqttConnectReturnCode code = ack.variableHeader().connectReturnCode();
    if (code != MqttConnectReturnCode.CONNECTION_ACCEPTED) {
      stats.refused(code.byteValue() & 0xff);
      failConnect(Failure.REFUSED, "CONNACK " + code);
      return;
    }
    connectCallback = null;
    cancel(connectTimeout);
    state = State.CONNECTED;
    stats.register(ledger);
    long latency = System.nanoTime() - connectStartNanos;
    stats.connected(latency);
    callback.connected(this, latency);
  }

  void onAck(MqttMessage ack, int packetId) {
    Pending p = pending.remove(packetId);
    if (p == null) {
      return; // late ack of a request that already timed out
    }
    cancel(p.timeout);
    long latency = System.nanoTime() - p.startNanos;
    if (p.sequence >= 0) {
      ledger.acked(p.sequence);
      stats.acked(latency);
      if (droppedAtMillis > 0) {
        stats.resumed(System.currentTimeMillis() - droppedAtMillis);
        droppedAtMillis = 0;
      }
    }
    p.callback.acked(ack, latency);
  }

  void onInbound(String topic, byte[] payload) {
    stats.inbound();
    MqttQoS answerQos = rpcAnswerQos;
    if (answerQos != null && RpcResponder.isRequest(topic)) {
      answerRpc(topic, payload, answerQos);
      return;
    }
    InboundMessage message = new InboundMessage(topic, payload);
    InboundCallback w = waiter;
    if (w != null) {
      waiter = null;
      cancel(waiterTimeout);
      w.received(message, System.nanoTime() - waiterStartNanos);
      return;
    }
    if (inbound.size() == protocol.maxInboundQueue()) {
      inbound.poll();
    }
    inbound.add(message);
  }

  private void answerRpc(String topic, byte[] request, MqttQoS qos) {
    stats.rpcRequested();
    RpcResponder.Answer answer = RpcResponder.answer(topic, request);
    Channel ch = channel;
    if (answer == null) {
      stats.rpcUnanswerable();
      return;
    }
    if (state != State.CONNECTED || ch == null) {
      return;
    }
    int packetId = 0;
    if (qos != MqttQoS.AT_MOST_ONCE) {
      packetId = track(answerAcked, System.nanoTime(), -1);
      if (packetId < 0) {
        return;
      }
    }
    stats.rpcAnswered();
    ch.writeAndFlush(
        MqttMessageBuilders.publish()
            .topicName(answer.topic())
            .qos(qos)
            .retained(false)
            .messageId(packetId)
            .payload(Unpooled.wrappedBuffer(answer.payload()))
            .build());
  }

  void send(MqttMessage message) {
    Channel ch = channel;
    if (ch != null && ch.isActive()) {
      ch.writeAndFlush(message);
    }
  }

  void closed(Failure failure, String reason) {
    if (state == State.CLOSED) {
      return;
    }
    boolean wasConnecting = state == State.CONNECTING;
    state = State.CLOSED;
    if (wasConnecting) {
      failConnect(failure, reason);
    }
    List<Pending> failed = new ArrayList<>(pending.values());
    pending.clear();
    for (Pending p : failed) {
      cancel(p.timeout);
      stats.failed(failure);
      p.callback.failed(failure, reason);
    }
    InboundCallback w = waiter;
    waiter = null;
    if (w != null) {
      cancel(waiterTimeout);
      w.timedOut();
    }
  }

  // ---- internals ----

  private int track(AckCallback callback, long startNanos, long sequence) {
    int packetId = nextPacketId();
    if (packetId < 0) {
      stats.failed(Failure.NO_PACKET_ID);
      callback.failed(Failure.NO_PACKET_ID, "65535 requests in flight");
      return -1;
    }
    Pending p = new Pending(callback, startNanos, sequence);
    p.timeout =
        loop.schedule(
            () -> {
              if (pending.get(packetId) == p) {
                pending.remove(packetId);
                stats.failed(Failure.TIMEOUT);
                p.callback.failed(Failure.TIMEOUT, "no ack within " + protocol.ackTimeout());
              }
            },
            protocol.ackTimeout().toNanos(),
            TimeUnit.NANOSECONDS);
    pending.put(packetId, p);
    return packetId;
  }

  private int nextPacketId() {
    for (int i = 0; i < 65535; i++) {
      lastPacketId = lastPacketId >= 65535 ? 1 : lastPacketId + 1;
      if (!pending.containsKey(lastPacketId)) {
        return lastPacketId;
      }
    }
    return -1;
  }

  private void failConnect(Failure failure, String message) {
    ConnectCallback callback = connectCallback;
    if (callback == null) {
      return;
    }
    connectCallback = null;
    cancel(connectTimeout);
    state = State.CLOSED;
    stats.failed(failure);
    Channel ch = channel;
    if (ch != null) {
      ch.close();
    }
    callback.failed(failure, message);
  }

  static MqttMessage ackOf(MqttMessageType type, int packetId) {
    return new MqttMessage(
        new MqttFixedHeader(
            type,
            false,
            type == MqttMessageType.PUBREL ? MqttQoS.AT_LEAST_ONCE : MqttQoS.AT_MOST_ONCE,
            false,
            2),
        MqttMessageIdVariableHeader.from(packetId));
  }

  private static void cancel(@Nullable ScheduledFuture<?> future) {
    if (future != null) {
      future.cancel(false);
    }
  }
}
