package io.fieldline.transport.mqtt;

import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.common.port.SessionTakeover;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.session.PreAuthLimits;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.fieldline.transport.mqtt.tls.TlsContext;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MQTT listener. Owns its Netty event loops and the subscription to the storage layer's
 * pressure gauges: while any gauge is overloaded, every connection stops reading its socket. Serves
 * the {@link SessionRegistry} it is given (and sweeps its expired sessions); the composition root
 * builds that registry first and hands it to the cluster as its {@code SessionCloser}, so neither
 * the cluster nor this server needs the other to exist first. Lifecycle: {@link #start()}, then
 * {@link #stopAccepting()} and {@link #close()} on shutdown. Thread-safe.
 */
public final class MqttServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(MqttServer.class);

  private final MqttTransportConfig config;
  private final SessionContext context;
  private final List<PressureGauge> storagePressure;
  private final Set<MqttSessionHandler> sessions = ConcurrentHashMap.newKeySet();
  private final PressureGauge.Listener pressureListener = this::onStoragePressure;
  private @Nullable EventLoopGroup bossGroup;
  private @Nullable EventLoopGroup workerGroup;
  private @Nullable Channel serverChannel;
  private @Nullable Channel tlsChannel;
  private @Nullable ScheduledExecutorService reloader;

  /**
   * @param config transport settings
   * @param registry token lookup for CONNECT
   * @param gateway where parsed messages go (the device actors, or the cluster's forwarding)
   * @param deadLetters where unparseable payloads go (policy {@code dead-letter})
   * @param parser ThingsBoard JSON parser
   * @param storagePressure gauges that pause every connection's reading while any is overloaded
   * @param meterRegistry where the transport registers its meters
   * @param sessions this node's session registry, built first (with {@code config.sessionExpiry()})
   *     so that the cluster can close local sessions through it
   * @param takeover told of every accepted session (one session per device across a cluster);
   *     {@link SessionTakeover#LOCAL_ONLY} on a single node
   */
  public MqttServer(
      MqttTransportConfig config,
      DeviceRegistry registry,
      DeviceInbox gateway,
      DeadLetterStore deadLetters,
      PayloadParser parser,
      List<PressureGauge> storagePressure,
      MeterRegistry meterRegistry,
      SessionRegistry sessions,
      SessionTakeover takeover,
      DeviceEvents events,
      TelemetryQueries queries) {
    this(
        config,
        registry,
        gateway,
        deadLetters,
        parser,
        storagePressure,
        meterRegistry,
        sessions,
        takeover,
        events,
        queries,
        DeviceServices.none());
  }

  /**
   * A listener that also serves firmware downloads ({@code v2/fw/request/...}) and the {@code
   * provision} login from {@code services}; the other parameters as above.
   */
  public MqttServer(
      MqttTransportConfig config,
      DeviceRegistry registry,
      DeviceInbox gateway,
      DeadLetterStore deadLetters,
      PayloadParser parser,
      List<PressureGauge> storagePressure,
      MeterRegistry meterRegistry,
      SessionRegistry sessions,
      SessionTakeover takeover,
      DeviceEvents events,
      TelemetryQueries queries,
      DeviceServices services) {
    this.config = config;
    this.storagePressure = List.copyOf(storagePressure);
    MqttMetrics metrics = new MqttMetrics(meterRegistry);
    PreAuthLimits preAuth = new PreAuthLimits(config);
    metrics.unauthenticatedConnections(preAuth::unauthenticated);
    this.context =
        new SessionContext(
            config,
            registry,
            gateway,
            deadLetters,
            parser,
            sessions,
            takeover,
            metrics,
            preAuth,
            events,
            queries,
            () -> this.storagePressure.stream().anyMatch(PressureGauge::isOverloaded),
            services);
  }

  /** Binds the listener; returns the bound address (the port is real even if 0 was asked). */
  public synchronized InetSocketAddress start() {
    if (serverChannel != null) {
      throw new IllegalStateException("already started");
    }
    // The certificate first: a bad one stops the start before anything is bound.
    MqttTransportConfig.Tls tlsConfig = config.tls();
    TlsContext tls =
        tlsConfig.enabled()
            ? new TlsContext(
                Path.of(tlsConfig.cert()),
                Path.of(tlsConfig.key()),
                tlsConfig.requestClientCert(),
                TlsContext.provider(tlsConfig.provider()))
            : null;
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelType =
        epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    bossGroup =
        new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("fieldline-mqtt-accept"), io);
    workerGroup =
        new MultiThreadIoEventLoopGroup(
            config.workerThreads(), new DefaultThreadFactory("fieldline-mqtt-io"), io);
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(bossGroup, workerGroup)
            .channel(channelType)
            .option(ChannelOption.SO_BACKLOG, 4096)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            // What a paused connection holds in flow control is at most one read's packets.
            .childOption(
                ChannelOption.RECVBUF_ALLOCATOR,
                new AdaptiveRecvByteBufAllocator(
                    64, Math.min(2048, config.maxReadSize()), config.maxReadSize()))
            .childOption(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(config.outboundLowWater(), config.outboundHighWater()))
            .childHandler(new MqttChannelInitializer(context, sessions, null));
    Channel bound;
    try {
      bound = bootstrap.bind(config.host(), config.port()).syncUninterruptibly().channel();
      serverChannel = bound;
      if (tls != null) {
        tlsChannel =
            bootstrap
                .clone()
                .childHandler(new MqttChannelInitializer(context, sessions, tls))
                .bind(config.host(), config.tls().port())
                .syncUninterruptibly()
                .channel();
      }
    } catch (RuntimeException e) {
      // A port in use: leave nothing listening or running behind.
      close();
      throw e;
    }
    if (tls != null) {
      // Off the accept thread: a slow file system must not hold up new connections.
      long reload = config.tls().reloadInterval().toMillis();
      reloader =
          Executors.newSingleThreadScheduledExecutor(
              new DefaultThreadFactory("fieldline-mqtt-tls-reload", true));
      reloader.scheduleWithFixedDelay(tls::reloadIfChanged, reload, reload, TimeUnit.MILLISECONDS);
      LOG.info(
          "[mqtt] listening for MQTT over TLS on {} ({}, {})",
          tlsChannel == null ? "?" : tlsChannel.localAddress(),
          String.join(", ", TlsContext.PROTOCOLS),
          tls.provider());
    }
    for (PressureGauge gauge : storagePressure) {
      gauge.subscribe(pressureListener);
    }
    long sweep = Math.max(1, Math.min(60, config.sessionExpiry().toSeconds()));
    bossGroup.scheduleAtFixedRate(context.sessions()::expire, sweep, sweep, TimeUnit.SECONDS);
    InetSocketAddress address = (InetSocketAddress) bound.localAddress();
    LOG.info("[mqtt] listening on {} ({})", address, epoll ? "epoll" : "nio");
    return address;
  }

  /** The bound port; only after {@link #start()}. */
  public int port() {
    Channel bound = serverChannel;
    if (bound == null) {
      throw new IllegalStateException("not started");
    }
    return ((InetSocketAddress) bound.localAddress()).getPort();
  }

  /** The bound port of the TLS listener, or -1 if it is not configured; only after start. */
  public int tlsPort() {
    Channel bound = tlsChannel;
    return bound == null ? -1 : ((InetSocketAddress) bound.localAddress()).getPort();
  }

  /** The transport's meters. */
  public MqttMetrics metrics() {
    return context.metrics();
  }

  /** This node's sessions: the registry given to the constructor. */
  public SessionRegistry sessions() {
    return context.sessions();
  }

  /** Stops accepting new connections; open ones keep being served. */
  public synchronized void stopAccepting() {
    for (Channel bound : new Channel[] {serverChannel, tlsChannel}) {
      if (bound != null) {
        bound.close().syncUninterruptibly();
      }
    }
  }

  /**
   * Closes every connection and the event loops, after a short quiet period in which already
   * scheduled acknowledgements are flushed.
   */
  @Override
  public synchronized void close() {
    stopAccepting();
    ScheduledExecutorService tlsReloader = reloader;
    if (tlsReloader != null) {
      tlsReloader.shutdownNow();
    }
    for (PressureGauge gauge : storagePressure) {
      gauge.unsubscribe(pressureListener);
    }
    for (MqttSessionHandler session : sessions) {
      session.shutdown();
    }
    Duration quiet = Duration.ofMillis(100);
    if (workerGroup != null) {
      workerGroup
          .shutdownGracefully(quiet.toMillis(), 5_000, TimeUnit.MILLISECONDS)
          .syncUninterruptibly();
    }
    if (bossGroup != null) {
      bossGroup.shutdownGracefully(0, 1_000, TimeUnit.MILLISECONDS).syncUninterruptibly();
    }
    LOG.info("[mqtt] stopped");
  }

  private void onStoragePressure(boolean overloaded) {
    LOG.info(
        "[mqtt] storage {}: {} reading on {} connections",
        overloaded ? "overloaded" : "relieved",
        overloaded ? "pausing" : "resuming",
        sessions.size());
    for (MqttSessionHandler session : sessions) {
      session.executeOnEventLoop(
          () -> session.onStoragePressure(context.storageOverloaded().getAsBoolean()));
    }
  }
}
