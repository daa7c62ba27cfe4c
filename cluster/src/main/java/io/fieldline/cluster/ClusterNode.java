package io.fieldline.cluster;

import io.fieldline.cluster.events.GrpcDeviceEvents;
import io.fieldline.cluster.forward.Forwarder;
import io.fieldline.cluster.forward.ForwardingService;
import io.fieldline.cluster.membership.ZooKeeperMembership;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.cluster.revocation.GrpcCredentialsRevocation;
import io.fieldline.cluster.revocation.RevocationService;
import io.fieldline.cluster.ring.RingHistory;
import io.fieldline.cluster.ring.RingKeeper;
import io.fieldline.cluster.takeover.GrpcSessionTakeover;
import io.fieldline.cluster.takeover.LocalSessions;
import io.fieldline.cluster.takeover.TakeoverService;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.feed.DeviceMoves;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.common.port.SessionCloser;
import io.fieldline.common.port.SessionTakeover;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Fieldline node's membership in a cluster: the entry point of this module.
 *
 * <p>Lifecycle, driven by the composition root:
 *
 * <ol>
 *   <li>{@link #start}: binds the gRPC listener, connects to ZooKeeper and loads the members. The
 *       node does not own anything yet; messages for devices of other members are forwarded.
 *   <li>The transport is built with {@link #gateway()}, {@link #sessionTakeover()}, {@link
 *       #deviceEvents()} and {@link #forwardingPressure()}, and started; the REST API with {@link
 *       #credentialsRevocation()} and {@link #deviceEvents()}.
 *   <li>{@link #join}: registers this node's ephemeral znode with its MQTT and HTTP ports and waits
 *       until the node is on its own ring.
 *   <li>{@link #leave} on shutdown (the other nodes take the devices over after their rebalance
 *       delay), then {@link #close}.
 * </ol>
 *
 * <p>See {@code docs/cluster.md} for what happens to devices when nodes join, leave, die or lose
 * ZooKeeper. Thread-safe.
 */
public final class ClusterNode implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);

  private record StopStep(String name, Runnable action) {}

  private final ClusterConfig config;
  private final ClusterMetrics metrics;
  private final Deque<StopStep> stopSteps = new ArrayDeque<>();
  private final PressureGauge pressure = new PressureGauge("cluster-forwarding", 1, 0);
  private final ExecutorService grpcExecutor;
  private final ScheduledExecutorService timer;
  // How long a replaced ring is remembered: far longer than export's move-window.
  private static final Duration RING_HISTORY_KEEP = Duration.ofHours(1);

  private final RingKeeper keeper;
  private final RingHistory rings;
  private final PeerChannels channels;
  private final Forwarder forwarder;
  private final ClusterDeviceInbox gateway;
  private final LocalSessions sessions;
  private final GrpcSessionTakeover takeover;
  private final GrpcCredentialsRevocation revocation;
  private final GrpcDeviceEvents deviceEvents;
  private final ZooKeeperMembership membership;
  private @Nullable Server server;
  private int grpcPort;
  private boolean closed;

  private ClusterNode(
      ClusterConfig config,
      DeviceInbox local,
      SessionCloser sessionCloser,
      CredentialsRevocation localRevocation,
      LocalDeviceEvents localEvents,
      MeterRegistry registry) {
    this.config = config;
    this.metrics = new ClusterMetrics(registry);
    this.grpcExecutor =
        Executors.newFixedThreadPool(
            Math.max(2, Runtime.getRuntime().availableProcessors()), named("fieldline-grpc-"));
    ScheduledThreadPoolExecutor scheduler =
        new ScheduledThreadPoolExecutor(1, named("fieldline-cluster-timer-"));
    scheduler.setRemoveOnCancelPolicy(true); // one deadline per forwarded message, mostly cancelled
    this.timer = scheduler;
    this.keeper = new RingKeeper(config, metrics);
    // Every ring from the first, with when it came into force: which devices moved (export).
    this.rings = new RingHistory(System::currentTimeMillis, RING_HISTORY_KEEP.toMillis());
    keeper.addListener(rings::accept);
    this.channels = PeerChannels.tcp(grpcExecutor, timer, config.forwardTimeout());
    this.forwarder =
        new Forwarder(
            config.nodeId(),
            channels,
            config.forwardTimeout(),
            config.maxInflightPerPeer(),
            timer,
            metrics,
            pressure);
    this.gateway = new ClusterDeviceInbox(config.nodeId(), keeper::view, local, forwarder, metrics);
    long retention = Math.max(60_000, 2 * config.takeoverTimeout().toMillis());
    this.sessions = new LocalSessions(retention);
    this.takeover =
        new GrpcSessionTakeover(
            config.nodeId(),
            () -> keeper.latestMembers().values(),
            channels,
            sessions,
            config.takeoverTimeout(),
            config.maxPendingTakeovers(),
            metrics,
            Clock.systemUTC());
    this.revocation =
        new GrpcCredentialsRevocation(
            config.nodeId(),
            () -> keeper.latestMembers().values(),
            channels,
            localRevocation,
            config.takeoverTimeout(),
            config.maxPendingTakeovers(),
            metrics);
    this.deviceEvents =
        new GrpcDeviceEvents(
            config.nodeId(),
            keeper::latestMembers,
            channels,
            localEvents,
            config.eventTimeout(),
            config.maxInflightEventsPerPeer(),
            config.maxPendingRpcCalls(),
            timer,
            metrics);
    this.membership = new ZooKeeperMembership(config, keeper::accept);
    keeper.addListener(this::onView);
    startGrpc(local, sessionCloser, localRevocation);
  }

  /**
   * Starts the node: gRPC listener, ZooKeeper connection, members loaded. Blocks at most about
   * twice {@code zookeeper-connection-timeout}.
   *
   * @param local this node's gateway (its device actors)
   * @param sessionCloser closes this node's MQTT session of a device that connected elsewhere;
   *     called on a gRPC thread, must not block
   * @param localRevocation this node's own revocation of a device whose credential changed (forget
   *     its cached lookups, close its session); called on a gRPC thread when another node tells,
   *     must not block
   * @param localEvents this node's device event listeners: events published on other nodes are
   *     handed to them (on a gRPC thread; listeners must not block), and {@link #deviceEvents()}
   *     publishes to them and subscribes there; the transport and REST API may share it
   * @throws IllegalStateException if ZooKeeper cannot be reached, or the gRPC port is taken
   */
  public static ClusterNode start(
      ClusterConfig config,
      DeviceInbox local,
      SessionCloser sessionCloser,
      CredentialsRevocation localRevocation,
      LocalDeviceEvents localEvents,
      MeterRegistry registry) {
    if (!config.enabled()) {
      throw new IllegalArgumentException("fieldline.cluster.zookeeper is empty: no cluster");
    }
    ClusterNode node =
        new ClusterNode(config, local, sessionCloser, localRevocation, localEvents, registry);
    try {
      node.membership.start();
      node.stopSteps.push(new StopStep("ZooKeeper", node.membership::close));
      node.timer.scheduleAtFixedRate(
          () -> node.sessions.prune(System.currentTimeMillis()), 30, 30, TimeUnit.SECONDS);
      return node;
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private void startGrpc(
      DeviceInbox local, SessionCloser sessionCloser, CredentialsRevocation localRevocation) {
    stopSteps.push(
        new StopStep(
            "executors",
            () -> {
              timer.shutdownNow();
              grpcExecutor.shutdownNow();
            }));
    stopSteps.push(new StopStep("ring", keeper::close));
    stopSteps.push(new StopStep("peer channels", channels::close));
    stopSteps.push(new StopStep("metrics", metrics::unregister));
    Server started =
        NettyServerBuilder.forAddress(new InetSocketAddress(config.grpcHost(), config.grpcPort()))
            .executor(grpcExecutor)
            .callExecutor(ForwardingService.onEventLoop())
            // Peers ping open calls every PeerChannels.KEEP_ALIVE; allow it (the default is 5 min).
            .permitKeepAliveTime(PeerChannels.KEEP_ALIVE.toSeconds() / 2, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(false)
            .addService(
                new ForwardingService(
                    config.nodeId(), local, this::claiming, config.maxInflightPerPeer(), metrics))
            .addService(new TakeoverService(config.nodeId(), sessions, sessionCloser, metrics))
            .addService(new RevocationService(config.nodeId(), localRevocation, metrics))
            .addService(deviceEvents.service())
            .build();
    try {
      started.start();
    } catch (IOException e) {
      close();
      throw new UncheckedIOException(
          "cannot bind gRPC on " + config.grpcHost() + ":" + config.grpcPort(), e);
    }
    server = started;
    grpcPort = started.getPort();
    stopSteps.push(new StopStep("gRPC server", () -> stopServer(started)));
    LOG.info("[cluster|{}] gRPC listening on {}:{}", config.nodeId(), config.grpcHost(), grpcPort);
  }

  private static void stopServer(Server server) {
    server.shutdown();
    try {
      // Inbound forwarding streams never end by themselves; by now their answers went out.
      if (!server.awaitTermination(1, TimeUnit.SECONDS)) {
        server.shutdownNow();
        // Let the cancellations run before the executor they run on is stopped.
        server.awaitTermination(2, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.shutdownNow();
    }
  }

  /**
   * Registers this node with its listeners' ports and waits until it is on its own ring. A node
   * restarted under the same id may wait up to the ZooKeeper session timeout, until the previous
   * process's znode expires.
   *
   * @throws IllegalStateException if the node is not on its ring within the session timeout plus
   *     the connection timeout (for example: another running node uses the same node id)
   */
  public void join(int mqttPort, int httpPort) {
    String host = config.advertisedHost();
    Member self =
        new Member(
            config.nodeId(), host + ":" + mqttPort, host + ":" + httpPort, host + ":" + grpcPort);
    CompletableFuture<Void> onRing = new CompletableFuture<>();
    keeper.addListener(
        view -> {
          if (view.claiming()) {
            onRing.complete(null);
          }
        });
    membership.register(self);
    stopSteps.push(new StopStep("registration", membership::deregister));
    if (keeper.view().claiming()) {
      onRing.complete(null);
    }
    Duration wait = config.sessionTimeout().plus(config.connectionTimeout());
    try {
      onRing.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "node "
              + config.nodeId()
              + " not registered within "
              + wait
              + ": is another running node using the same node id?");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while joining", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
    LOG.info("[cluster|{}] joined: {}", config.nodeId(), keeper.view().ring());
  }

  /**
   * Deletes this node's znode: it stops claiming its devices at once, and the other nodes take them
   * over after their rebalance delay. Messages of devices connected here keep being forwarded.
   */
  public void leave() {
    membership.deregister();
  }

  private void onView(ClusterView view) {
    Set<String> peers = new HashSet<>(view.ring().nodes());
    peers.addAll(keeper.latestMembers().keySet());
    forwarder.retainOnly(peers);
    deviceEvents.retainOnly(peers);
    channels.retainOnly(peers);
  }

  /** The gateway the transport submits device messages to. */
  public ClusterDeviceInbox gateway() {
    return gateway;
  }

  /** The takeover the transport calls for every accepted session. */
  public SessionTakeover sessionTakeover() {
    return takeover;
  }

  /**
   * What the REST API calls once a credential is replaced or a device deleted: revokes on this node
   * and on every other member, completing when all have answered (or failed).
   */
  public CredentialsRevocation credentialsRevocation() {
    return revocation;
  }

  /**
   * Where device events go (attribute pushes, server-side RPC, RPC subscriptions): this node's
   * listeners and every other member's, whichever node the device's session is on. Subscribing
   * registers on this node's {@link LocalDeviceEvents}. See {@code docs/cluster.md}, "Device
   * events".
   */
  public DeviceEvents deviceEvents() {
    return deviceEvents;
  }

  /**
   * Overloaded while at least one peer has three quarters of {@code max-inflight-per-peer}
   * forwarded messages in flight; the transport stops reading sockets meanwhile.
   */
  public PressureGauge forwardingPressure() {
    return pressure;
  }

  /** The view in force: ring, member addresses, own claim. */
  public ClusterView view() {
    return keeper.view();
  }

  /** Whether this node is on its own ring (connected to ZooKeeper and registered). */
  public boolean claiming() {
    return keeper.view().claiming();
  }

  /**
   * The owners each device had on this node's rings over time (docs/export.md: a moved device's
   * records wait for its former owner's).
   */
  public DeviceMoves deviceMoves() {
    return rings;
  }

  /** Called on the ring thread after every rebuild; must not block. */
  public void addViewListener(Consumer<ClusterView> listener) {
    keeper.addListener(listener);
  }

  public String nodeId() {
    return config.nodeId();
  }

  /** The bound gRPC port (the real one if 0 was configured). */
  public int grpcPort() {
    return grpcPort;
  }

  public ClusterMetrics metrics() {
    return metrics;
  }

  /** The ZooKeeper membership (tests inject session expiry through its client). */
  public ZooKeeperMembership membership() {
    return membership;
  }

  /**
   * Leaves, closes the forwarding streams (answers not yet in are rejected), stops the gRPC
   * listener (1 s grace), the ZooKeeper session and the threads. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    forwarder.close();
    deviceEvents.close();
    while (!stopSteps.isEmpty()) {
      StopStep step = stopSteps.pop();
      try {
        step.action().run();
      } catch (RuntimeException e) {
        LOG.warn("[cluster|{}] stopping {} failed: {}", config.nodeId(), step.name(), e.toString());
      }
    }
    LOG.info("[cluster|{}] stopped", config.nodeId());
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }
}
