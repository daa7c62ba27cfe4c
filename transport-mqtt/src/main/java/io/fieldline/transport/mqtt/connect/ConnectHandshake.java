package io.fieldline.transport.mqtt.connect;

import io.fieldline.common.Device;
import io.fieldline.common.SessionTakeover;
import io.fieldline.transport.mqtt.MqttMetrics.ConnectResult;
import io.fieldline.transport.mqtt.pipeline.KeepAlive;
import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.RateLimitedLog;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CONNECT handshake of one connection (MQTT 3.1.1 §3.1, §3.2): the checks ({@link
 * ConnectChecks}), the asynchronous access-token lookup, and the answer — CONNACK 0x00 for an
 * accepted session, or a refusing CONNACK ({@link ConnectRefusal}) and close.
 *
 * <p>While the token is looked up the socket is not read ({@link Pause#AUTH}): packets the client
 * pipelined behind CONNECT stay in the pipeline's flow control, at most {@code
 * max-queued-before-connack} of them ({@code PreConnackLimit}), and reach the dispatcher, in order,
 * once CONNACK is written and reading resumes. Accepting registers the session on this node (which
 * closes an older local connection of the device) and tells the cluster's {@link SessionTakeover}
 * (which closes it on other nodes); when the channel closes, the handshake ends that registration
 * again.
 *
 * <p>Confined to the channel's event loop; the lookup's completion hops back to it.
 */
public final class ConnectHandshake {

  /** The dispatcher's side of the handshake. Called on the channel's event loop. */
  public interface Listener {
    /** The session was accepted and CONNACK written: serve the device's packets from now on. */
    void sessionStarted(Device device, SessionState state);
  }

  private static final Logger LOG = LoggerFactory.getLogger(ConnectHandshake.class);
  private static final Map<ConnectRefusal, RateLimitedLog> REFUSALS =
      new EnumMap<>(ConnectRefusal.class);
  private static final RateLimitedLog LOOKUP_FAILURES =
      new RateLimitedLog(LOG, 10, TimeUnit.SECONDS);

  static {
    for (ConnectRefusal refusal : ConnectRefusal.values()) {
      REFUSALS.put(refusal, new RateLimitedLog(LOG, 10, TimeUnit.SECONDS));
    }
  }

  private final SessionContext context;
  private final Connection connection;
  private final Listener listener;
  private @Nullable Device device;
  private boolean cleanSession = true;

  public ConnectHandshake(SessionContext context, Connection connection, Listener listener) {
    this.context = context;
    this.connection = connection;
    this.listener = listener;
  }

  /** A CONNECT packet: checked, then the token lookup starts; CONNACK follows its completion. */
  public void onConnect(MqttConnectMessage connect) {
    if (connection.state() != Connection.State.AWAIT_CONNECT) {
      // MQTT 3.1.1 §3.1.0: a second CONNECT is a protocol violation.
      connection.reject(CloseReason.PROTOCOL, "second CONNECT");
      return;
    }
    if (ConnectChecks.isMqtt5(connect)) {
      refuse(ConnectRefusal.MQTT5_NOT_SUPPORTED);
      return;
    }
    cleanSession = connect.variableHeader().isCleanSession();
    connection.identify(connect.payload().clientIdentifier());
    if (!ConnectChecks.wellFormedStrings(connect)) {
      // MQTT 3.1.1 §1.5.3: ill-formed UTF-8 or U+0000 in a string → close, no CONNACK.
      connection.reject(CloseReason.BAD_UTF8, "client id or user name with U+0000 or bad UTF-8");
      return;
    }
    ConnectRefusal refusal = ConnectChecks.refusal(connect, context.config());
    if (refusal != null) {
      refuse(refusal);
      return;
    }
    if (!context.preAuth().mayAuthenticate(connection.ctx().channel())) {
      refuse(ConnectRefusal.AUTH_RATE_LIMITED);
      return;
    }
    String token = connect.payload().userName(); // present and not empty: checked above
    connection.enterAuthenticating();
    connection.pause(Pause.AUTH);
    int keepAlive = connect.variableHeader().keepAliveTimeSeconds();
    try {
      context
          .registry()
          .findByToken(token)
          .whenCompleteAsync(
              (found, error) -> onLookup(found, error, keepAlive),
              connection.ctx().channel().eventLoop());
    } catch (RuntimeException e) {
      onLookup(null, e, keepAlive);
    }
  }

  /**
   * A packet the decoder could not read. Before CONNECT, an unknown protocol level or a client id
   * the MQTT 3.1 rules reject is answered with its CONNACK.
   *
   * @return whether it was such a refusal (answered, closing); otherwise the caller handles it
   */
  public boolean onDecoderFailure(Throwable cause) {
    if (connection.state() != Connection.State.AWAIT_CONNECT) {
      return false;
    }
    ConnectRefusal refusal = ConnectChecks.refusal(cause);
    if (refusal == null) {
      return false;
    }
    refuse(refusal);
    return true;
  }

  /** The channel closed: this node's session registration ends. */
  public void onChannelClosed() {
    Device current = device;
    if (current != null) {
      context.sessions().unregister(current.id(), cleanSession, connection);
    }
  }

  private void onLookup(
      @Nullable Optional<Device> found, @Nullable Throwable error, int keepAlive) {
    if (connection.state() != Connection.State.AUTHENTICATING) {
      return; // closed while the lookup was running
    }
    if (error != null || found == null) {
      LOOKUP_FAILURES.warn(
          "{} credential lookup failed: {}", connection.logPrefix(), String.valueOf(error));
      refuse(ConnectRefusal.SERVER_UNAVAILABLE);
      return;
    }
    if (found.isEmpty()) {
      refuse(ConnectRefusal.UNKNOWN_TOKEN);
      return;
    }
    accept(found.get(), keepAlive);
  }

  private void accept(Device authenticated, int keepAlive) {
    device = authenticated;
    SessionRegistry.Registration registration =
        context.sessions().register(authenticated.id(), cleanSession, connection);
    context.takeover().sessionOpened(authenticated.id());
    KeepAlive.apply(connection.ctx().pipeline(), keepAlive);
    MqttPipeline.sessionAccepted(connection.ctx().pipeline());
    connection.enterConnected();
    context.preAuth().authenticated(connection.ctx().channel());
    context.metrics().connect(ConnectResult.ACCEPTED);
    connection
        .ctx()
        .writeAndFlush(
            MqttMessageBuilders.connAck()
                .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                .sessionPresent(registration.sessionPresent())
                .build());
    LOG.debug("{} connected as device {}", connection.logPrefix(), authenticated.id());
    listener.sessionStarted(authenticated, registration.state());
    if (context.storageOverloaded().getAsBoolean()) {
      connection.pause(Pause.STORAGE);
    }
    connection.resume(Pause.AUTH);
  }

  private void refuse(ConnectRefusal refusal) {
    context.metrics().connect(refusal.result());
    if (refusal == ConnectRefusal.NO_TOKEN || refusal == ConnectRefusal.UNKNOWN_TOKEN) {
      context.preAuth().authenticationFailed(connection.ctx().channel());
    }
    // One line per kind of refusal per interval: 1,000 wrong tokens must not write 1,000 lines.
    REFUSALS
        .get(refusal)
        .info("{} CONNECT refused: {}", connection.logPrefix(), refusal.describe());
    // MQTT 3.1.1 §3.2.2.3: after a non-zero CONNACK the server MUST close the connection.
    connection.closeAfter(
        MqttMessageBuilders.connAck()
            .returnCode(refusal.returnCode())
            .sessionPresent(false)
            .build(),
        CloseReason.CONNECT_REFUSED);
  }
}
