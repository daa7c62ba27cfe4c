package io.fieldline.transport.mqtt.session;

import io.fieldline.common.log.LogThrottles;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttMetrics.PauseCause;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One MQTT connection's lifecycle as every path of the transport sees it: how far the handshake
 * got, why its socket is not being read, and the one way it ends.
 *
 * <p>States: {@link State#AWAIT_CONNECT} → {@link State#AUTHENTICATING} → {@link State#CONNECTED} →
 * {@link State#CLOSED}; any state may end in {@code CLOSED}.
 *
 * <p>Reading: {@code autoRead} is the transport's backpressure valve. It goes off when the first
 * {@link Pause} is set and back on when the last one is cleared, so authentication, a full window,
 * storage pressure, a client that does not read its answers, the client-side RPC rate and a failing
 * write never undo each other's pause. Keep-alive: the pipeline's idle timer reports silence
 * ({@link #onIdle}); silence while the server is not reading is the server's own and does not close
 * the connection.
 *
 * <p>Closing: every server-side end goes through {@link #close}, {@link #reject} or {@link
 * #closeAfter}, which count the {@link CloseReason} once and flush earlier acknowledgements first;
 * the socket then ends without a reset ({@link LingeringClose}). Only this connection is affected.
 *
 * <p>Confined to the channel's event loop, except {@link #takeOver()}, which any thread may call.
 */
public final class Connection implements SessionRegistry.Member {

  private static final Logger LOG = LoggerFactory.getLogger(Connection.class);
  // One budget per kind of bad input: a flood of one kind must not hide the others.
  private static final LogThrottles<CloseReason> REJECTIONS = new LogThrottles<>(CloseReason.class);
  // How long a closing connection waits for the client to close its side (LingeringClose).
  private static final Duration CLOSE_LINGER = Duration.ofSeconds(2);

  /** How far the connection got. */
  public enum State {
    /** Open, no CONNECT yet (the connect timeout runs). */
    AWAIT_CONNECT,
    /**
     * CONNECT checked, token lookup running; reading is paused and packets read behind CONNECT wait
     * in the pipeline's flow control.
     */
    AUTHENTICATING,
    /** CONNACK 0x00 sent: the device's packets are served. */
    CONNECTED,
    /** Closing or closed: nothing more is read or answered. */
    CLOSED
  }

  private final ChannelHandlerContext ctx;
  private final MqttMetrics metrics;
  private final EnumSet<Pause> pauses = EnumSet.noneOf(Pause.class);
  private State state = State.AWAIT_CONNECT;
  private Negotiated negotiated = Negotiated.MQTT_3;
  private String logPrefix;
  private @Nullable ScheduledFuture<?> connectDeadline;
  private @Nullable ScheduledFuture<?> outboundStall;

  /** A connection whose channel just became active. */
  public Connection(ChannelHandlerContext ctx, MqttMetrics metrics) {
    this.ctx = ctx;
    this.metrics = metrics;
    this.logPrefix = "[mqtt|-|" + ctx.channel().remoteAddress() + "]";
  }

  /** The session stage's context: where this connection writes, flushes and schedules. */
  public ChannelHandlerContext ctx() {
    return ctx;
  }

  public State state() {
    return state;
  }

  public boolean isConnected() {
    return state == State.CONNECTED;
  }

  /** CONNECT passed its checks; the token lookup starts. */
  public void enterAuthenticating() {
    assert ctx.executor().inEventLoop();
    state = State.AUTHENTICATING;
  }

  /**
   * CONNACK 0x00 is being sent with what it {@code negotiated}: the connect deadline no longer
   * applies.
   */
  public void enterConnected(Negotiated negotiated) {
    assert ctx.executor().inEventLoop();
    this.negotiated = negotiated;
    state = State.CONNECTED;
    cancelConnectDeadline();
  }

  /**
   * The protocol version and limits of this connection ({@link Negotiated#MQTT_3} until CONNACK).
   */
  public Negotiated negotiated() {
    return negotiated;
  }

  /**
   * Starts the connect deadline: unless CONNACK 0x00 is sent within {@code timeout} of now, the
   * connection is closed ({@link CloseReason#CONNECT_TIMEOUT}), however its bytes were trickled.
   */
  public void startConnectDeadline(Duration timeout) {
    assert ctx.executor().inEventLoop();
    connectDeadline =
        ctx.executor()
            .schedule(
                () -> {
                  if (state == State.AWAIT_CONNECT || state == State.AUTHENTICATING) {
                    reject(
                        CloseReason.CONNECT_TIMEOUT,
                        "not connected within {} ({})",
                        timeout,
                        state == State.AWAIT_CONNECT ? "CONNECT incomplete" : "authenticating");
                  }
                },
                timeout.toNanos(),
                TimeUnit.NANOSECONDS);
  }

  private void cancelConnectDeadline() {
    ScheduledFuture<?> deadline = connectDeadline;
    if (deadline != null) {
      deadline.cancel(false);
      connectDeadline = null;
    }
  }

  /**
   * Names the client in every later log line: {@code [mqtt|clientId|address]}, the client id
   * escaped and truncated ({@link LogSafe}).
   */
  public void identify(String clientId) {
    logPrefix = "[mqtt|" + LogSafe.text(clientId) + "|" + ctx.channel().remoteAddress() + "]";
  }

  /** The prefix of this connection's log lines; pass it as an argument, never in a template. */
  public String logPrefix() {
    return logPrefix;
  }

  /**
   * Stops reading the socket for {@code cause} (no-op if already paused for it, or once closed: a
   * closing connection reads and drops what the client still sends).
   */
  public void pause(Pause cause) {
    assert ctx.executor().inEventLoop();
    if (state == State.CLOSED) {
      return;
    }
    boolean first = pauses.isEmpty();
    if (pauses.add(cause)) {
      PauseCause counted = counted(cause);
      if (counted != null) {
        metrics.paused(counted);
      }
      if (first) {
        ctx.channel().config().setAutoRead(false);
      }
    }
  }

  /** Clears {@code cause}; reading resumes if it was the last one. */
  public void resume(Pause cause) {
    assert ctx.executor().inEventLoop();
    if (pauses.remove(cause) && pauses.isEmpty() && state != State.CLOSED) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  /** Stops reading the socket for {@code cause} during {@code delay}, then clears it. */
  public void pauseFor(Pause cause, Duration delay) {
    assert ctx.executor().inEventLoop();
    if (pauses.contains(cause)) {
      return;
    }
    pause(cause);
    ctx.executor().schedule(() -> resume(cause), delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  // The pauses that are backpressure (counted in fieldline.mqtt.backpressure.pauses); AUTH and
  // FAILING are steps of the handshake and of closing.
  private static @Nullable PauseCause counted(Pause cause) {
    return switch (cause) {
      case WINDOW -> PauseCause.WINDOW;
      case STORAGE -> PauseCause.STORAGE;
      case OUTBOUND -> PauseCause.OUTBOUND;
      case RPC_RATE -> PauseCause.RPC_RATE;
      case ATTRIBUTE_RATE, ATTRIBUTE_READS -> PauseCause.ATTRIBUTE_REQUESTS;
      // Firmware downloads are paced like attribute requests and counted with them.
      case FIRMWARE_RATE, FIRMWARE_READS -> PauseCause.ATTRIBUTE_REQUESTS;
      case GATEWAY_CREATIONS -> PauseCause.GATEWAY_CREATIONS;
      case AUTH, FAILING -> null;
    };
  }

  /**
   * The socket's outbound buffer crossed a water mark ({@code outbound-high-water} up, {@code
   * outbound-low-water} down). Above it the client is not reading its answers: the socket is not
   * read either (answers are written only for what was read, and the downlink writes nothing while
   * the socket is not writable, so the buffer stops growing), and unless the client catches up
   * within {@code stallTimeout} the connection is closed.
   */
  public void onWritabilityChanged(boolean writable, Duration stallTimeout) {
    assert ctx.executor().inEventLoop();
    if (state == State.CLOSED) {
      return;
    }
    if (writable) {
      cancelOutboundStall();
      resume(Pause.OUTBOUND);
      return;
    }
    pause(Pause.OUTBOUND);
    if (outboundStall == null) {
      outboundStall =
          ctx.executor()
              .schedule(
                  () -> {
                    outboundStall = null;
                    if (!ctx.channel().isWritable()) {
                      reject(
                          CloseReason.SLOW_READER,
                          "answers not read for {} ({} bytes to drain before writable)",
                          stallTimeout,
                          ctx.channel().bytesBeforeWritable());
                    }
                  },
                  stallTimeout.toNanos(),
                  TimeUnit.NANOSECONDS);
    }
  }

  private void cancelOutboundStall() {
    ScheduledFuture<?> stall = outboundStall;
    if (stall != null) {
      stall.cancel(false);
      outboundStall = null;
    }
  }

  /** The storage layer's pressure changed; only a connected session follows it. */
  public void onStoragePressure(boolean overloaded) {
    assert ctx.executor().inEventLoop();
    if (state != State.CONNECTED) {
      return;
    }
    if (overloaded) {
      pause(Pause.STORAGE);
    } else {
      resume(Pause.STORAGE);
    }
  }

  /**
   * The idle timer fired: no packet within keep-alive (before CONNECT the connect deadline rules,
   * {@link #startConnectDeadline}).
   */
  public void onIdle() {
    assert ctx.executor().inEventLoop();
    if (!pauses.isEmpty() && state == State.CONNECTED) {
      return; // we stopped reading, not the client: silence is ours
    }
    close(state == State.CONNECTED ? CloseReason.KEEP_ALIVE_TIMEOUT : CloseReason.CONNECT_TIMEOUT);
  }

  /**
   * Counts and logs a bad input (at most one line per {@link CloseReason} per 10 s), then closes.
   * String arguments are client text (topics, client ids, decoder messages): they are escaped and
   * truncated ({@link LogSafe}).
   */
  public void reject(CloseReason reason, String format, Object... args) {
    if (state == State.CLOSED) {
      return;
    }
    // The prefix holds the client id: pass it as an argument, never inside the template, so that
    // a client id containing "{}" cannot shift the arguments.
    Object[] all = new Object[args.length + 2];
    all[0] = logPrefix;
    all[1] = reason.tag();
    for (int i = 0; i < args.length; i++) {
      all[i + 2] = args[i] instanceof String text ? LogSafe.text(text) : args[i];
    }
    REJECTIONS.get(reason).warn(LOG, "{} closing ({}): " + format, all);
    close(reason);
  }

  /**
   * The one way this connection ends. Earlier acknowledgements are flushed first; a connected MQTT
   * 5 client is then told why in a DISCONNECT ({@link CloseReason#disconnectCode()}).
   */
  public void close(CloseReason reason) {
    assert ctx.executor().inEventLoop();
    if (state == State.CLOSED) {
      return;
    }
    boolean tell = state == State.CONNECTED && negotiated.mqtt5() && reason.disconnectCode() >= 0;
    state = State.CLOSED;
    metrics.closed(reason);
    LOG.debug("{} closing: {}", logPrefix, reason);
    if (tell) {
      // MQTT 5 §4.13.2: the server may send DISCONNECT with a reason code before it closes.
      ctx.write(
          MqttMessageBuilders.disconnect().reasonCode((byte) reason.disconnectCode()).build());
    }
    ctx.flush();
    end();
  }

  /**
   * Ends the connection with a last packet (a refusing CONNACK): it is written and flushed, and the
   * channel closes once it is on the wire.
   */
  public void closeAfter(Object lastPacket, CloseReason reason) {
    assert ctx.executor().inEventLoop();
    if (state == State.CLOSED) {
      ReferenceCountUtil.release(lastPacket);
      return;
    }
    state = State.CLOSED;
    metrics.closed(reason);
    ctx.writeAndFlush(lastPacket);
    end();
  }

  // The socket ends once what was written is on the wire; what the client still sends meanwhile
  // is dropped (LingeringClose). TLS says close_notify first.
  private void end() {
    SslHandler tls = ctx.pipeline().get(SslHandler.class);
    if (tls != null) {
      // A flush held back by the consolidation stage leaves the last packets as plain text in the
      // TLS stage, which encrypts nothing once its output is closed: flush them past it first.
      ChannelHandlerContext consolidation = ctx.pipeline().context(FlushConsolidationHandler.class);
      if (consolidation != null) {
        consolidation.flush();
      }
      tls.closeOutbound();
    }
    LingeringClose.end(ctx.channel(), CLOSE_LINGER);
  }

  /** The channel became inactive, whoever closed it. */
  public void channelClosed() {
    state = State.CLOSED;
    cancelConnectDeadline();
    cancelOutboundStall();
  }

  @Override
  public void takeOver() {
    ctx.channel().eventLoop().execute(() -> close(CloseReason.TAKEN_OVER));
  }

  @Override
  public void revoke() {
    ctx.channel().eventLoop().execute(() -> close(CloseReason.CREDENTIALS_REVOKED));
  }
}
