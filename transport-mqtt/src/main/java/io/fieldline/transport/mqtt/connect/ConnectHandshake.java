package io.fieldline.transport.mqtt.connect;

import io.fieldline.common.device.Device;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.log.LogThrottles;
import io.fieldline.common.port.SessionTakeover;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.transport.mqtt.MqttMetrics.ConnectResult;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.pipeline.ConnectPropertyScan;
import io.fieldline.transport.mqtt.pipeline.KeepAlive;
import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.Connection;
import io.fieldline.transport.mqtt.session.MqttStrings;
import io.fieldline.transport.mqtt.session.Negotiated;
import io.fieldline.transport.mqtt.session.Pause;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.fieldline.transport.mqtt.session.SessionState;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CONNECT handshake of one connection (MQTT 3.1.1 §3.1, §3.2; MQTT 5 §3.1, §3.2): the checks
 * ({@link ConnectChecks}, {@link ConnectProperties}), the asynchronous credential lookup ({@link
 * CredentialLookup}), and the answer — CONNACK 0x00 for an accepted session, with MQTT 5 the limits
 * the server grants ({@link Negotiated}), or a refusing CONNACK ({@link ConnectRefusal}) and close.
 * The protocol version is the CONNECT's: Netty's decoder and encoder follow it on this channel.
 *
 * <p>While the credential is looked up the socket is not read ({@link Pause#AUTH}): packets the
 * client pipelined behind CONNECT stay in the pipeline's flow control, at most {@code
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

    /**
     * A provisioning session was accepted and CONNACK written: serve its packets with {@code
     * provisioning} from now on.
     */
    void provisioningStarted(DeviceProvisioning provisioning);
  }

  private static final Logger LOG = LoggerFactory.getLogger(ConnectHandshake.class);
  private static final LogThrottles<ConnectRefusal> REFUSALS =
      new LogThrottles<>(ConnectRefusal.class);
  private static final LogThrottle LOOKUP_FAILURES = new LogThrottle();

  private final SessionContext context;
  private final Connection connection;
  private final Listener listener;
  private @Nullable Device device;
  private boolean v5;
  private boolean cleanStart = true;
  // How long the session outlives the connection; an MQTT 5 DISCONNECT may change it.
  private Duration sessionExpiry = Duration.ZERO;
  // MQTT 5: whether CONNECT asked for a Session Expiry Interval other than 0 (§3.14.2.2.2).
  private boolean requestedExpiry;
  // MQTT 5: the largest packet the client accepts, for what a refusal may say.
  private long clientMaximumPacketSize = Long.MAX_VALUE;

  public ConnectHandshake(SessionContext context, Connection connection, Listener listener) {
    this.context = context;
    this.connection = connection;
    this.listener = listener;
  }

  /** A CONNECT packet: checked, then the credential lookup starts; CONNACK follows it. */
  public void onConnect(MqttConnectMessage connect) {
    if (connection.state() != Connection.State.AWAIT_CONNECT) {
      // MQTT 3.1.1 §3.1.0, MQTT 5 §3.1: a second CONNECT is a protocol violation.
      connection.reject(CloseReason.PROTOCOL, "second CONNECT");
      return;
    }
    v5 = connect.variableHeader().version() == MqttVersion.MQTT_5.protocolLevel();
    cleanStart = connect.variableHeader().isCleanSession();
    connection.identify(connect.payload().clientIdentifier());
    if (!ConnectChecks.wellFormedStrings(connect)) {
      // MQTT 3.1.1 §1.5.3, MQTT 5 §1.5.4: ill-formed UTF-8 or U+0000 → close, no CONNACK.
      connection.reject(CloseReason.BAD_UTF8, "client id or user name with U+0000 or bad UTF-8");
      return;
    }
    ConnectProperties properties =
        v5 ? ConnectProperties.read(connect.variableHeader().properties()) : ConnectProperties.NONE;
    if (properties == null) {
      refuse(ConnectRefusal.PROTOCOL_ERROR);
      return;
    }
    Integer repeated = connection.ctx().channel().attr(ConnectPropertyScan.REPEATED).get();
    if (v5 && repeated != null) {
      refuse(ConnectRefusal.REPEATED_PROPERTY);
      return;
    }
    if (v5
        && connect.variableHeader().isWillFlag()
        && !MqttStrings.isValidResponseTopic(connect.payload().willProperties())) {
      // MQTT 5 §3.1.3.2.5: the Will's Response Topic is a topic name, wildcards not allowed.
      refuse(ConnectRefusal.PROTOCOL_ERROR);
      return;
    }
    clientMaximumPacketSize = properties.maximumPacketSize();
    requestedExpiry = properties.sessionExpirySeconds() != 0;
    if (properties.authenticationMethod() != null) {
      // MQTT 5 §4.12: enhanced authentication is not offered; the method is refused.
      refuse(ConnectRefusal.BAD_AUTHENTICATION_METHOD);
      return;
    }
    ConnectRefusal refusal = ConnectChecks.refusal(connect, context.config());
    if (refusal != null) {
      refuse(refusal);
      return;
    }
    X509Certificate certificate = CredentialLookup.clientCertificate(connection.ctx().pipeline());
    Optional<DeviceProvisioning> provisioning = context.provisioning();
    if (provisioning.isPresent() && ProvisionLogin.requested(connect)) {
      acceptProvisioning(accepted(connect, properties, certificate != null), provisioning.get());
      return;
    }
    if (!CredentialLookup.presentsCredential(connect, certificate)) {
      refuse(ConnectRefusal.NO_CREDENTIALS);
      return;
    }
    if (!context.preAuth().mayAuthenticate(connection.ctx().channel())) {
      refuse(ConnectRefusal.AUTH_RATE_LIMITED);
      return;
    }
    if (certificate != null && !CredentialLookup.isAcceptable(certificate)) {
      refuse(ConnectRefusal.UNKNOWN_CREDENTIALS);
      return;
    }
    CompletionStage<Optional<Device>> lookup;
    try {
      lookup = CredentialLookup.start(context.registry(), connect, certificate);
    } catch (RuntimeException e) {
      lookup = CompletableFuture.failedFuture(e);
    }
    Accepted accepted = accepted(connect, properties, certificate != null);
    sessionExpiry = accepted.sessionExpiry();
    connection.enterAuthenticating();
    connection.pause(Pause.AUTH);
    lookup.whenCompleteAsync(
        (found, error) -> onLookup(found, error, accepted), connection.ctx().channel().eventLoop());
  }

  /**
   * A client DISCONNECT. MQTT 5 §3.14.2.2.2: it may change the Session Expiry Interval, except from
   * 0 to another value (a Protocol Error).
   */
  public void onDisconnect(MqttMessage disconnect) {
    if (v5
        && disconnect.variableHeader()
            instanceof MqttReasonCodeAndPropertiesVariableHeader header) {
      MqttProperties.MqttProperty<?> expiry =
          header.properties().getProperty(MqttProperties.SESSION_EXPIRY_INTERVAL);
      if (expiry != null && expiry.value() instanceof Integer seconds) {
        if (!requestedExpiry && seconds != 0) {
          connection.reject(
              CloseReason.PROTOCOL, "DISCONNECT sets a session expiry on a session without one");
          return;
        }
        sessionExpiry = grantedExpiry(Integer.toUnsignedLong(seconds));
      }
    }
    // The session ends (or starts expiring) now, not when the channel has closed: a reconnect
    // racing the close must not resume a session the client asked to end.
    onChannelClosed();
    connection.close(CloseReason.CLIENT_DISCONNECT);
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
      context.sessions().unregister(current.id(), sessionExpiry, connection);
    }
  }

  /**
   * What an accepted CONNECT is granted: its negotiated limits, the session's lifetime, the
   * keep-alive, and the CONNACK properties that tell an MQTT 5 client where they differ from what
   * it asked.
   */
  private record Accepted(
      Negotiated negotiated,
      Duration sessionExpiry,
      int keepAlive,
      MqttProperties connAck,
      boolean presentedName) {}

  private Accepted accepted(
      MqttConnectMessage connect, ConnectProperties properties, boolean hasCertificate) {
    MqttTransportConfig config = context.config();
    int keepAlive = connect.variableHeader().keepAliveTimeSeconds();
    // A user name or a client certificate: what a refusal calls unknown credentials.
    boolean presentedName =
        hasCertificate
            || (connect.variableHeader().hasUserName() && !connect.payload().userName().isEmpty());
    if (!v5) {
      return new Accepted(
          Negotiated.MQTT_3,
          cleanStart ? Duration.ZERO : config.sessionExpiry(),
          keepAlive,
          MqttProperties.NO_PROPERTIES,
          presentedName);
    }
    // Built property by property: Netty's CONNACK properties builder always adds Retain
    // Available = 0, and Fieldline accepts the retain flag (it stores the message; docs).
    MqttProperties connAck = new MqttProperties();
    connAck.add(integer(MqttProperties.RECEIVE_MAXIMUM, config.maxInflight()));
    connAck.add(integer(MqttProperties.MAXIMUM_PACKET_SIZE, config.maxPacketSize()));
    connAck.add(integer(MqttProperties.TOPIC_ALIAS_MAXIMUM, config.topicAliasMaximum()));
    connAck.add(integer(MqttProperties.SHARED_SUBSCRIPTION_AVAILABLE, 0));
    connAck.add(integer(MqttProperties.SUBSCRIPTION_IDENTIFIER_AVAILABLE, 0));
    Duration expiry = grantedExpiry(properties.sessionExpirySeconds());
    if (expiry.toSeconds() != properties.sessionExpirySeconds()) {
      connAck.add(integer(MqttProperties.SESSION_EXPIRY_INTERVAL, (int) expiry.toSeconds()));
    }
    int maxKeepAlive = (int) config.maxKeepAlive().toSeconds();
    if (keepAlive == 0 || keepAlive > maxKeepAlive) {
      keepAlive = maxKeepAlive;
      connAck.add(integer(MqttProperties.SERVER_KEEP_ALIVE, maxKeepAlive));
    }
    if (connect.payload().clientIdentifier().isEmpty()) {
      // MQTT 5 §3.1.3.1: an empty client id gets one assigned and returned in CONNACK.
      String assigned = "fieldline-" + UUID.randomUUID();
      connection.identify(assigned);
      connAck.add(
          new MqttProperties.StringProperty(MqttProperties.ASSIGNED_CLIENT_IDENTIFIER, assigned));
    }
    Negotiated negotiated =
        new Negotiated(
            true,
            config.maxInflight(),
            config.topicAliasMaximum(),
            properties.receiveMaximum(),
            properties.maximumPacketSize(),
            properties.problemInformation());
    return new Accepted(negotiated, expiry, keepAlive, connAck, presentedName);
  }

  private static MqttProperties.IntegerProperty integer(int id, int value) {
    return new MqttProperties.IntegerProperty(id, value);
  }

  private Duration grantedExpiry(long requestedSeconds) {
    long max = context.config().sessionExpiry().toSeconds();
    return Duration.ofSeconds(Math.min(requestedSeconds, max));
  }

  private void onLookup(
      @Nullable Optional<Device> found, @Nullable Throwable error, Accepted accepted) {
    if (connection.state() != Connection.State.AUTHENTICATING) {
      return; // closed while the lookup was running
    }
    if (error != null || found == null) {
      LOOKUP_FAILURES.warn(
          LOG, "{} credential lookup failed: {}", connection.logPrefix(), String.valueOf(error));
      refuse(ConnectRefusal.SERVER_UNAVAILABLE);
      return;
    }
    if (found.isEmpty()) {
      // Without a user name (and certificate) the client id alone was tried: to a client that
      // sent no user name, "bad user name or password" (0x04 / 0x86) says what is missing.
      refuse(
          accepted.presentedName()
              ? ConnectRefusal.UNKNOWN_CREDENTIALS
              : ConnectRefusal.NO_CREDENTIALS);
      return;
    }
    accept(found.get(), accepted);
  }

  private void accept(Device authenticated, Accepted accepted) {
    device = authenticated;
    SessionRegistry.Registration registration =
        context
            .sessions()
            .register(
                authenticated.id(), cleanStart, !accepted.sessionExpiry().isZero(), connection);
    context.takeover().sessionOpened(authenticated.id());
    KeepAlive.apply(connection.ctx().pipeline(), accepted.keepAlive());
    MqttPipeline.sessionAccepted(connection.ctx().pipeline());
    connection.enterConnected(accepted.negotiated());
    context.preAuth().authenticated(connection.ctx().channel());
    context.metrics().connect(ConnectResult.ACCEPTED);
    connection
        .ctx()
        .writeAndFlush(
            MqttMessageBuilders.connAck()
                .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                // MQTT 5 §3.2.2.1.1: a clean start never has a session present.
                .sessionPresent(registration.sessionPresent() && !cleanStart)
                .properties(accepted.connAck())
                .build());
    LOG.debug("{} connected as device {}", connection.logPrefix(), authenticated.id());
    listener.sessionStarted(authenticated, registration.state());
    if (context.storageOverloaded().getAsBoolean()) {
      connection.pause(Pause.STORAGE);
    }
    connection.resume(Pause.AUTH);
  }

  /**
   * Accepts a provisioning session at once (there is no credential to look up): CONNACK 0x00, but
   * nothing is registered or announced, and the connection keeps counting as unauthenticated (its
   * slot among {@code max-unauthenticated-connections}), so provisioning clients can never crowd
   * out devices. Its session never outlives the connection.
   */
  private void acceptProvisioning(Accepted accepted, DeviceProvisioning provisioning) {
    sessionExpiry = Duration.ZERO;
    MqttProperties connAck = accepted.connAck();
    if (v5 && requestedExpiry) {
      // MQTT 5 §3.2.2.3.2: the server says the session ends with the connection.
      connAck.add(integer(MqttProperties.SESSION_EXPIRY_INTERVAL, 0));
    }
    KeepAlive.apply(connection.ctx().pipeline(), accepted.keepAlive());
    MqttPipeline.sessionAccepted(connection.ctx().pipeline());
    connection.enterConnected(accepted.negotiated());
    connection
        .ctx()
        .writeAndFlush(
            MqttMessageBuilders.connAck()
                .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                .sessionPresent(false)
                .properties(connAck)
                .build());
    LOG.debug("{} provisioning session", connection.logPrefix());
    listener.provisioningStarted(provisioning);
  }

  private void refuse(ConnectRefusal refusal) {
    context.metrics().connect(refusal.result());
    if (refusal == ConnectRefusal.NO_CREDENTIALS || refusal == ConnectRefusal.UNKNOWN_CREDENTIALS) {
      context.preAuth().authenticationFailed(connection.ctx().channel());
    }
    // One line per kind of refusal per interval: 1,000 wrong tokens must not write 1,000 lines.
    REFUSALS
        .get(refusal)
        .info(
            LOG,
            "{} CONNECT refused: {} ({})",
            connection.logPrefix(),
            refusal.describe(),
            refusal.returnCode(v5));
    MqttProperties properties = MqttProperties.NO_PROPERTIES;
    String reason = refusal.describe();
    // CONNACK: fixed header 2, flags 1, code 1, property length 1, reason string 3 + text.
    if (v5 && clientMaximumPacketSize >= 8L + reason.length()) {
      // MQTT 5 §3.2.2.3.9: a reason string tells the device owner what to fix, if it fits.
      properties = new MqttProperties();
      properties.add(new MqttProperties.StringProperty(MqttProperties.REASON_STRING, reason));
    }
    // MQTT 3.1.1 §3.2.2.3, MQTT 5 §3.2.2.2: after a refusing CONNACK the server closes.
    connection.closeAfter(
        MqttMessageBuilders.connAck()
            .returnCode(refusal.returnCode(v5))
            .sessionPresent(false)
            .properties(properties)
            .build(),
        CloseReason.CONNECT_REFUSED);
  }
}
