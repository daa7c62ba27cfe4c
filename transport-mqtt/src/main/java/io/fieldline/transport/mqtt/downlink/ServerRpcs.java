package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.DeviceId;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttMetrics.RpcOutcome;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.DownlinkMessage;
import io.fieldline.transport.mqtt.session.DownlinkState;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.fieldline.transport.mqtt.session.RpcDelivery;
import io.netty.channel.ChannelHandlerContext;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows each server-side RPC a connection sends to what becomes of it, and reports that to the
 * request's {@link io.fieldline.common.rpc.RpcCallback}: {@code sent()} once its PUBLISH is
 * written, {@code delivered()} at its PUBACK (QoS 1) or right after the write (QoS 0), {@code
 * responded(body)} when the device publishes on {@code v1/devices/me/rpc/response/{n}} (or, for a
 * child of a gateway's session, the gateway on {@code v1/gateway/rpc} with {@code "id": n}), {@code
 * undelivered(reason)} when the session gives it up first. An answer settles only a request of the
 * device it answers for: the session's own device on its topic, the named child on the gateway's.
 * The session tracks each request by {@code n} ({@link DownlinkState#track}) until it ends: at its
 * answer, {@code timeoutMillis} after it was sent (two-way; the session forgets it, the caller's
 * own timeout answers), or at delivery (one-way).
 *
 * <p>Confined to the channel's event loop.
 */
public final class ServerRpcs {

  private static final Logger LOG = LoggerFactory.getLogger(ServerRpcs.class);
  private static final LogThrottle UNKNOWN = new LogThrottle();
  private static final int FIRST_ERROR_REASON = 0x80;

  private final Connection connection;
  private final ChannelHandlerContext ctx;
  private final DownlinkState state;
  private final MqttMetrics metrics;
  private final DeviceId device;
  // This connection's timers of sent two-way requests, by n; the deadlines live in the requests.
  private final Map<Integer, ScheduledFuture<?>> timeouts = new HashMap<>();

  /**
   * @param device the session's device (the one that answers on {@code v1/devices/me/rpc/...})
   */
  ServerRpcs(Connection connection, DownlinkState state, MqttMetrics metrics, DeviceId device) {
    this.connection = connection;
    this.ctx = connection.ctx();
    this.state = state;
    this.metrics = metrics;
    this.device = device;
  }

  /**
   * The device answered on {@code v1/devices/me/rpc/response/{requestId}}. An answer to a pending
   * one-way request proves its delivery (its PUBACK may still be on the way, or lost with an
   * earlier connection); an answer to nothing pending (unknown, timed out, answered already, or a
   * request of a gateway's child) is counted and logged. The PUBLISH is acknowledged either way.
   */
  public void onResponse(String requestId, byte[] payload) {
    assert ctx.executor().inEventLoop();
    int n;
    try {
      n = Integer.parseInt(requestId);
    } catch (NumberFormatException e) {
      unknown("v1/devices/me/rpc/response/" + LogSafe.text(requestId));
      return;
    }
    answered(
        n, device, new String(payload, StandardCharsets.UTF_8), "v1/devices/me/rpc/response/" + n);
  }

  /**
   * A gateway answered request {@code requestId} of its child {@code child} on {@code
   * v1/gateway/rpc}, with {@code body} (the JSON text of its {@code "data"}); as {@link
   * #onResponse} otherwise.
   */
  public void onChildResponse(int requestId, DeviceId child, String body) {
    assert ctx.executor().inEventLoop();
    answered(requestId, child, body, "v1/gateway/rpc (id " + requestId + ")");
  }

  private void answered(int requestId, DeviceId answering, String body, String where) {
    RpcDelivery rpc = state.untrack(requestId);
    if (rpc != null && !rpc.rpc().deviceId().equals(answering)) {
      // Another device's request of the same session: not this answer's to settle.
      state.track(rpc, Integer.MAX_VALUE);
      rpc = null;
    }
    if (rpc != null && rpc.rpc().oneway()) {
      delivered(rpc); // a one-way request is answered only if it arrived
      return;
    }
    if (rpc != null) {
      cancelTimeout(rpc.requestId());
      delivered(rpc);
      if (rpc.settle()) {
        rpc.callback().responded(body);
        metrics.rpc(RpcOutcome.RESPONDED);
        return;
      }
    }
    unknown(where);
  }

  private void unknown(String where) {
    metrics.rpc(RpcOutcome.UNKNOWN_RESPONSE);
    UNKNOWN.warn(
        LOG,
        "{} answer on {} matches no pending request of that device: ignored",
        connection.logPrefix(),
        where);
  }

  /** The PUBLISH of {@code message} was written ({@code success}) or failed. */
  void onWritten(DownlinkMessage message, boolean success) {
    RpcDelivery rpc = message.rpc();
    if (rpc == null || rpc.isSettled()) {
      return;
    }
    if (!success) {
      if (message.qos() == 0) {
        // Its bytes left the session with the write; nothing will retry it.
        state.untrack(rpc);
        if (rpc.giveUp("the connection closed before it was written")) {
          metrics.rpc(RpcOutcome.UNDELIVERED);
        }
      }
      return; // a QoS 1 request stays with the session for the next connection, or is given up
    }
    rpc.callback().sent();
    if (message.qos() == 0) {
      delivered(rpc);
    }
    if (!rpc.rpc().oneway() && !rpc.isSettled()) {
      awaitAnswer(rpc, System.currentTimeMillis() + rpc.rpc().timeoutMillis());
    }
  }

  /** The device acknowledged {@code message} with {@code reasonCode} (MQTT 5; 0 for 3.1.1). */
  void onAcknowledged(DownlinkMessage message, int reasonCode) {
    RpcDelivery rpc = message.rpc();
    if (rpc == null) {
      return;
    }
    if (reasonCode >= FIRST_ERROR_REASON) {
      // MQTT 5 §3.4.2.1: the client took the PUBLISH but refused it.
      forget(rpc);
      String reason =
          String.format(Locale.ROOT, "the device refused it (PUBACK reason 0x%02X)", reasonCode);
      if (rpc.giveUp(reason)) {
        metrics.rpc(RpcOutcome.UNDELIVERED);
      }
      return;
    }
    delivered(rpc);
  }

  /**
   * The connection holds the session from now on: requests sent by an earlier connection and still
   * awaiting their answer get their timers back (those past their deadline end at once).
   */
  void resume() {
    for (RpcDelivery rpc : state.tracked()) {
      if (!rpc.rpc().oneway() && rpc.answerDeadlineMillis() > 0 && !rpc.isSettled()) {
        awaitAnswer(rpc, rpc.answerDeadlineMillis());
      }
    }
  }

  /** The connection closed: its timers stop; the requests stay with the session. */
  void close() {
    timeouts.values().forEach(timer -> timer.cancel(false));
    timeouts.clear();
  }

  private void delivered(RpcDelivery rpc) {
    if (!rpc.isSettled() && rpc.markDelivered()) {
      rpc.callback().delivered();
      metrics.rpc(RpcOutcome.DELIVERED);
    }
    if (rpc.rpc().oneway()) {
      forget(rpc);
      rpc.settle();
    }
  }

  private void forget(RpcDelivery rpc) {
    state.untrack(rpc);
    cancelTimeout(rpc.requestId());
  }

  private void awaitAnswer(RpcDelivery rpc, long deadlineMillis) {
    rpc.answerDeadlineMillis(deadlineMillis);
    long delay = Math.max(0, deadlineMillis - System.currentTimeMillis());
    ScheduledFuture<?> previous =
        timeouts.put(
            rpc.requestId(),
            ctx.executor().schedule(() -> timedOut(rpc), delay, TimeUnit.MILLISECONDS));
    if (previous != null) {
      previous.cancel(false);
    }
  }

  private void timedOut(RpcDelivery rpc) {
    timeouts.remove(rpc.requestId());
    state.untrack(rpc);
    if (rpc.settle()) {
      metrics.rpc(RpcOutcome.TIMED_OUT);
    }
  }

  private void cancelTimeout(int requestId) {
    ScheduledFuture<?> timer = timeouts.remove(requestId);
    if (timer != null) {
      timer.cancel(false);
    }
  }
}
