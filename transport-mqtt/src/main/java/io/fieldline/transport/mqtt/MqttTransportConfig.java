package io.fieldline.transport.mqtt;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import io.fieldline.transport.common.bounds.DeviceBoundsConfig;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import java.time.Duration;

/**
 * The MQTT transport's settings, read once from {@code fieldline.mqtt} (see this module's {@code
 * reference.conf} for each key's meaning and environment variable; the bounds the HTTP device API
 * shares, {@link DeviceBoundsConfig}, are documented in transport-common's).
 *
 * @param host address to bind
 * @param port TCP port; 0 picks a free port (tests)
 * @param workerThreads Netty I/O threads; 0 = number of cores
 * @param maxPacketSize largest accepted MQTT packet in bytes, fixed header included (the Maximum
 *     Packet Size of MQTT 5 CONNACK)
 * @param maxClientIdLength longest accepted client identifier
 * @param maxConnections open connections beyond which new ones are closed at once
 * @param connectTimeout time a new connection has to send CONNECT and be authenticated
 * @param maxUnauthenticatedConnections open connections not yet authenticated beyond which new ones
 *     are closed at once
 * @param perAddressConnectionRate new connections per second per source address; 0 = no limit
 * @param perAddressConnectionBurst new connections a source address may open at once
 * @param perAddressFailedAuthBurst failed authentications a source address may have before its
 *     CONNECTs are refused unchecked; 0 = no limit
 * @param perAddressFailedAuthRefill time in which a source address regains one failed
 *     authentication
 * @param perAddressTableSize source addresses whose budgets are remembered
 * @param maxInflight unacknowledged PUBLISHes per connection before reading pauses
 * @param inflightLowWater reading resumes when the unacknowledged count falls to this
 * @param maxAwaitingRelease QoS 2 packet ids a session may hold between PUBREC and PUBREL
 * @param outboundHighWater bytes queued for a connection's socket at which reading it stops
 * @param outboundLowWater queued bytes at which reading resumes
 * @param outboundStallTimeout time a connection may stay above the high-water mark before it is
 *     closed
 * @param clientRpcRate client-side RPC requests per second a connection is answered at before its
 *     reading is slowed; 0 = no limit
 * @param clientRpcBurst client-side RPC requests answered at once, on top of the rate
 * @param attributeRequestRate attribute requests per second a connection is answered at before its
 *     reading is slowed; 0 = no limit
 * @param attributeRequestBurst attribute requests answered at once, on top of the rate; also the
 *     most attribute reads one connection has outstanding
 * @param maxQueuedBeforeConnack packets a client may pipeline behind CONNECT while it is being
 *     authenticated
 * @param maxReadSize most bytes read from one socket at once
 * @param sessionExpiry how long a CleanSession=0 session outlives its connection; the most an MQTT
 *     5 client's Session Expiry Interval is granted
 * @param maxKeepAlive the longest keep-alive an MQTT 5 client is granted (Server Keep Alive)
 * @param topicAliasMaximum inbound topic aliases an MQTT 5 connection may define; 0 = none
 * @param invalidPayload what to do with a payload that is not valid ThingsBoard JSON
 * @param downlink what the server holds and sends to devices ({@code fieldline.mqtt.downlink})
 * @param tls the MQTT-over-TLS listener ({@code fieldline.mqtt.tls})
 * @param gateway the bounds of gateway sessions ({@code fieldline.mqtt.gateway})
 */
public record MqttTransportConfig(
    String host,
    int port,
    int workerThreads,
    int maxPacketSize,
    int maxClientIdLength,
    int maxConnections,
    Duration connectTimeout,
    int maxUnauthenticatedConnections,
    int perAddressConnectionRate,
    int perAddressConnectionBurst,
    int perAddressFailedAuthBurst,
    Duration perAddressFailedAuthRefill,
    int perAddressTableSize,
    int maxInflight,
    int inflightLowWater,
    int maxAwaitingRelease,
    int outboundHighWater,
    int outboundLowWater,
    Duration outboundStallTimeout,
    int clientRpcRate,
    int clientRpcBurst,
    int attributeRequestRate,
    int attributeRequestBurst,
    int maxQueuedBeforeConnack,
    int maxReadSize,
    Duration sessionExpiry,
    Duration maxKeepAlive,
    int topicAliasMaximum,
    InvalidPayloadPolicy invalidPayload,
    Downlink downlink,
    Tls tls,
    Gateway gateway) {

  /**
   * What the server sends to devices — shared-attribute pushes, attribute answers, server-side RPC
   * requests — and how much of it one session may hold.
   *
   * @param maxQueued messages one session holds for its device: waiting to be sent, or sent at QoS
   *     1 and not yet acknowledged (kept with a persistent session between connections)
   * @param maxQueuedBytes payload and topic bytes of those messages
   * @param maxInflight QoS 1 messages sent and not yet acknowledged (MQTT 5: at most the client's
   *     Receive Maximum)
   * @param retransmitInterval MQTT 3.1.1: time after which an unacknowledged QoS 1 message is sent
   *     again (DUP) while the connection lasts
   * @param maxPendingRpc server-side RPC requests one session tracks from being taken until they
   *     end (answered, timed out, or delivered for one-way requests)
   */
  public record Downlink(
      int maxQueued,
      long maxQueuedBytes,
      int maxInflight,
      Duration retransmitInterval,
      int maxPendingRpc) {}

  /**
   * The MQTT-over-TLS listener.
   *
   * @param port its TCP port (0: a free one)
   * @param cert PEM certificate chain file; empty: no TLS listener
   * @param key PEM PKCS#8 private key file of the certificate
   * @param reloadInterval how often both files are checked for changes
   */
  public record Tls(
      int port,
      String cert,
      String key,
      Duration reloadInterval,
      boolean requestClientCert,
      Provider provider) {

    /** Whether the TLS listener is opened. */
    public boolean enabled() {
      return !cert.isEmpty();
    }
  }

  /**
   * The bounds of a gateway's session (ThingsBoard's gateway API, {@code v1/gateway/*}).
   *
   * @param maxChildren child devices one gateway session has in use at once (announced or written
   *     to, and not disconnected)
   * @param maxDevicesPerMessage devices one telemetry or attributes message may name
   * @param registryConcurrency child lookups and links one gateway session runs at once (creations
   *     always run one at a time)
   * @param attributeRequestRate attribute requests per second a gateway's connection is answered at
   *     (its own and its children's) before its reading is slowed; 0 = no limit
   * @param attributeRequestBurst attribute requests a gateway's connection is answered at once, on
   *     top of the rate; also the most attribute reads it has outstanding
   * @param maxQueued messages a gateway's session holds for the gateway and its children (in place
   *     of {@code downlink.max-queued})
   * @param maxQueuedBytes payload and topic bytes of those messages (in place of {@code
   *     downlink.max-queued-bytes})
   * @param maxPendingRpc server-side RPC requests a gateway's session tracks for the gateway and
   *     its children (in place of {@code downlink.max-pending-rpc})
   * @param adoptExistingDevices whether a gateway may act for an existing device no gateway owns
   *     (created over REST), becoming its owner; off, it acts only for the devices it created or
   *     was linked to by an administrator
   * @param maxConcurrentCreations bulk child creations running at once on the node, all gateway
   *     sessions together
   */
  public record Gateway(
      int maxChildren,
      int maxDevicesPerMessage,
      int registryConcurrency,
      int attributeRequestRate,
      int attributeRequestBurst,
      int maxQueued,
      long maxQueuedBytes,
      int maxPendingRpc,
      boolean adoptExistingDevices,
      int maxConcurrentCreations) {

    /** The downlink bounds of a gateway's session: {@code downlink}'s, with the gateway's holds. */
    public Downlink downlink(Downlink downlink) {
      return new Downlink(
          maxQueued,
          maxQueuedBytes,
          downlink.maxInflight(),
          downlink.retransmitInterval(),
          maxPendingRpc);
    }
  }

  /** The TLS engine under Netty's {@code SslHandler}. */
  public enum Provider {
    /** OpenSSL (BoringSSL, netty-tcnative) where it loads, the JDK's engine elsewhere. */
    AUTO,
    /** OpenSSL (BoringSSL); the server does not start where it cannot load. */
    OPENSSL,
    /** The JDK's engine. */
    JDK
  }

  /** Reads and validates {@code fieldline.mqtt}; reports every invalid key at once. */
  public static MqttTransportConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, "fieldline.mqtt");
    String host = r.string("host");
    int port = r.integer("port", 0, 65535);
    int workerThreads = r.integer("worker-threads", 0);
    // The bounds the HTTP device API shares, read with this reader so that their errors are
    // listed with the rest.
    DeviceBoundsConfig bounds = DeviceBoundsConfig.read(r);
    int maxPacketSize = bounds.maxPacketSize();
    // MQTT 3.1.1 §3.1.3.1: servers must accept client ids of 1..23 characters.
    int maxClientIdLength = r.integer("max-client-id-length", 23);
    int maxConnections = r.integer("max-connections", 1);
    Duration connectTimeout = r.positiveDuration("connect-timeout");
    int maxUnauthenticated = r.integer("max-unauthenticated-connections", 1);
    int connectionRate = r.integer("per-address-connection-rate", 0);
    int connectionBurst = r.integer("per-address-connection-burst", 1);
    int failedAuthBurst = r.integer("per-address-failed-auth-burst", 0);
    Duration failedAuthRefill = r.positiveDuration("per-address-failed-auth-refill");
    int tableSize = r.integer("per-address-table-size", 1);
    int maxInflight = bounds.maxInflight();
    int inflightLowWater = r.integer("inflight-low-water", 0, 65535);
    r.check(
        inflightLowWater < maxInflight,
        "inflight-low-water",
        "must be >= 0 and < max-inflight, got " + inflightLowWater,
        "max-inflight");
    int maxAwaitingRelease = r.integer("max-awaiting-release", 1, 65535);
    int outboundHighWater = (int) r.bytes("outbound-high-water", 1024, Integer.MAX_VALUE);
    int outboundLowWater = (int) r.bytes("outbound-low-water", 0, Integer.MAX_VALUE);
    r.check(
        outboundLowWater < outboundHighWater,
        "outbound-low-water",
        "must be below outbound-high-water, got " + outboundLowWater,
        "outbound-high-water");
    Duration outboundStallTimeout = r.positiveDuration("outbound-stall-timeout");
    int clientRpcRate = bounds.clientRpcRate();
    int clientRpcBurst = bounds.clientRpcBurst();
    int attributeRequestRate = bounds.attributeRequestRate();
    int attributeRequestBurst = bounds.attributeRequestBurst();
    int maxQueuedBeforeConnack = r.integer("max-queued-before-connack", 0);
    int maxReadSize = (int) r.bytes("max-read-size", 64, 1 << 20);
    Duration sessionExpiry = r.nonNegativeDuration("session-expiry");
    Duration maxKeepAlive = r.positiveDuration("max-keep-alive");
    // MQTT 5 §3.2.2.3.14: Server Keep Alive is a two-byte number of seconds.
    r.check(
        maxKeepAlive.toSeconds() >= 1 && maxKeepAlive.toSeconds() <= 65535,
        "max-keep-alive",
        "must be between 1 second and 65535 seconds, got " + maxKeepAlive);
    // Each alias pins up to 1 KiB per connection (TopicAliases): bounded here, not by the client.
    int topicAliasMaximum = r.integer("topic-alias-maximum", 0, 1024);
    InvalidPayloadPolicy invalidPayload = bounds.invalidPayload();
    Downlink downlink =
        new Downlink(
            r.integer("downlink.max-queued", 1, 65535),
            r.bytes("downlink.max-queued-bytes", 1024, 1L << 30),
            // MQTT packet ids are 16 bits: at most 65535 unacknowledged.
            r.integer("downlink.max-inflight", 1, 65535),
            r.positiveDuration("downlink.retransmit-interval"),
            bounds.maxPendingRpc());
    Tls tls =
        new Tls(
            r.integer("tls.port", 0, 65535),
            r.string("tls.cert").strip(),
            r.string("tls.key").strip(),
            r.positiveDuration("tls.reload-interval"),
            r.bool("tls.request-client-certificate"),
            r.oneOf("tls.provider", Provider.class));
    Gateway gateway =
        new Gateway(
            r.integer("gateway.max-children", 1, 1_000_000),
            r.integer("gateway.max-devices-per-message", 1, 1_000_000),
            r.integer("gateway.registry-concurrency", 1, 1024),
            r.integer("gateway.attribute-request-rate", 0, 1_000_000),
            r.integer("gateway.attribute-request-burst", 1, 65535),
            r.integer("gateway.max-queued", 1, 65535),
            r.bytes("gateway.max-queued-bytes", 1024, 1L << 30),
            r.integer("gateway.max-pending-rpc", 1, 1_000_000),
            r.bool("gateway.adopt-existing-devices"),
            r.integer("gateway.max-concurrent-creations", 1, 1024));
    r.check(
        tls.cert().isEmpty() == tls.key().isEmpty(),
        "tls.key",
        "tls.cert and tls.key go together: set both or neither",
        "tls.cert");
    return r.validated(
        new MqttTransportConfig(
            host,
            port,
            workerThreads,
            maxPacketSize,
            maxClientIdLength,
            maxConnections,
            connectTimeout,
            maxUnauthenticated,
            connectionRate,
            connectionBurst,
            failedAuthBurst,
            failedAuthRefill,
            tableSize,
            maxInflight,
            inflightLowWater,
            maxAwaitingRelease,
            outboundHighWater,
            outboundLowWater,
            outboundStallTimeout,
            clientRpcRate,
            clientRpcBurst,
            attributeRequestRate,
            attributeRequestBurst,
            maxQueuedBeforeConnack,
            maxReadSize,
            sessionExpiry,
            maxKeepAlive,
            topicAliasMaximum,
            invalidPayload,
            downlink,
            tls,
            gateway));
  }

  /**
   * This configuration with one plain listener on a free port of 127.0.0.1 and no TLS listener: a
   * private listener beside the real ones (the start's MQTT warm-up).
   */
  public MqttTransportConfig loopbackOnly() {
    return new MqttTransportConfig(
        "127.0.0.1",
        0,
        workerThreads,
        maxPacketSize,
        maxClientIdLength,
        maxConnections,
        connectTimeout,
        maxUnauthenticatedConnections,
        perAddressConnectionRate,
        perAddressConnectionBurst,
        perAddressFailedAuthBurst,
        perAddressFailedAuthRefill,
        perAddressTableSize,
        maxInflight,
        inflightLowWater,
        maxAwaitingRelease,
        outboundHighWater,
        outboundLowWater,
        outboundStallTimeout,
        clientRpcRate,
        clientRpcBurst,
        attributeRequestRate,
        attributeRequestBurst,
        maxQueuedBeforeConnack,
        maxReadSize,
        sessionExpiry,
        maxKeepAlive,
        topicAliasMaximum,
        invalidPayload,
        downlink,
        new Tls(0, "", "", tls.reloadInterval(), false, tls.provider()),
        gateway);
  }
}
