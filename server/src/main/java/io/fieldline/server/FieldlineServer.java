package io.fieldline.server;

import com.datastax.oss.driver.api.core.CqlSession;
import com.typesafe.config.Config;
import io.fieldline.actors.ActorsConfig;
import io.fieldline.actors.LocalDeviceGateway;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cluster.ClusterConfig;
import io.fieldline.cluster.ClusterNode;
import io.fieldline.common.DeadLetterStore;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceGateway;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.PayloadParser;
import io.fieldline.common.PressureGauge;
import io.fieldline.common.SessionTakeover;
import io.fieldline.common.TelemetryQueries;
import io.fieldline.common.TelemetryStore;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.server.rest.JwtTokens;
import io.fieldline.server.rest.RestApi;
import io.fieldline.transport.mqtt.MqttServer;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds every component from one configuration and starts them in dependency
 * order. Each start pushes its stop step; {@link #close()} runs the steps in reverse, which is also
 * what happens when a later start fails. No DI framework: what depends on what is readable here,
 * top to bottom.
 *
 * <p>With {@code fieldline.cluster.zookeeper} set, the node joins a cluster: a {@link ClusterNode}
 * (gRPC listener, ZooKeeper membership) sits between the transport and the local device actors,
 * forwarding each message to its device's owner node, and tells the other nodes when a device
 * connects here. Without it the server is a single node and nothing of the cluster runs.
 *
 * <p>Shutdown order: leave the cluster (the other nodes take this node's devices), unbind HTTP,
 * stop accepting MQTT connections, let in-flight writes (local and forwarded) finish and their
 * PUBACKs go out, close connections, stop the cluster node, stop the actors, close the driver, stop
 * the embedded Cassandra. {@link #start} blocks (it waits for Cassandra, and for ZooKeeper in a
 * cluster); call it from {@code main} or a test.
 */
public final class FieldlineServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FieldlineServer.class);

  private record StopStep(String name, Runnable action) {}

  private final Deque<StopStep> stopSteps = new ArrayDeque<>();
  private final PrometheusMeterRegistry metrics =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private @Nullable ServerConfig config;
  private @Nullable EmbeddedCassandra embeddedCassandra;
  private @Nullable DeviceRegistry registry;
  private @Nullable MqttServer mqtt;
  private @Nullable ClusterNode cluster;
  private @Nullable ServerBinding http;
  private @Nullable String adminPassword;
  private @Nullable Device demoDevice;
  private boolean closed;

  private FieldlineServer() {}

  /** Builds and starts everything; blocks until the server is ready to take devices. */
  public static FieldlineServer start(Config root) {
    FieldlineServer server = new FieldlineServer();
    try {
      server.startAll(root);
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
  }

  private void startAll(Config root) {
    ServerConfig serverConfig = ServerConfig.from(root);
    config = serverConfig;
    CassandraConfig cassandraConfig = CassandraConfig.from(root);
    MqttTransportConfig mqttConfig = MqttTransportConfig.from(root);
    ActorsConfig actorsConfig = ActorsConfig.from(root);
    ClusterConfig clusterConfig = ClusterConfig.from(root);
    new JvmMemoryMetrics().bindTo(metrics);
    new JvmGcMetrics().bindTo(metrics);
    new JvmThreadMetrics().bindTo(metrics);
    new ProcessorMetrics().bindTo(metrics);
    String password =
        GeneratedSecrets.resolve(
            serverConfig.adminPassword(), serverConfig.dataDir(), "admin-password", 12);
    adminPassword = password;
    String jwtSecret =
        GeneratedSecrets.resolve(
            serverConfig.jwtSecret(), serverConfig.dataDir(), "jwt-secret", 48);

    EmbeddedCassandra node = EmbeddedDefaults.startIfNeeded(serverConfig, cassandraConfig);
    embeddedCassandra = node;
    if (node != null) {
      onStop("embedded Cassandra", node::stop);
    }
    List<InetSocketAddress> embeddedContact = node == null ? List.of() : List.of(node.cqlAddress());
    // Session, schema (with its data steps), stores; closing drains writes, then the session.
    CassandraStorage storage = CassandraStorage.start(root, metrics, embeddedContact);
    onStop("Cassandra storage", storage::close);
    CqlSession session = storage.session();
    TelemetryStore telemetryStore = storage.telemetryStore();
    DeadLetterStore deadLetters = storage.deadLetters();
    DeviceRegistry devices = storage.deviceRegistry();
    registry = devices;
    TelemetryQueries queries = storage.queries();

    // One actor system for the device actors and Pekko HTTP.
    ActorSystem<Void> actorSystem = ActorSystem.create(Behaviors.empty(), "fieldline", root);
    onStop(
        "actor system",
        () -> {
          actorSystem.terminate();
          await(actorSystem.getWhenTerminated(), Duration.ofSeconds(10), "actor system");
        });
    LocalDeviceGateway gateway =
        LocalDeviceGateway.create(actorSystem, actorsConfig, telemetryStore, metrics);
    Duration drain = actorsConfig.shutdownTimeout().plusSeconds(5);
    onStop("device actors", () -> await(gateway.shutdown(), drain, "device actors"));

    // Single node: the transport talks to the device actors. Cluster: to the cluster node, which
    // forwards each message to its device's owner (possibly this node's actors).
    AtomicReference<MqttServer> transport = new AtomicReference<>();
    ClusterNode clusterNode =
        clusterConfig.enabled() ? startCluster(clusterConfig, gateway, transport) : null;
    if (clusterNode != null) {
      // Actors of devices the ring gives to another node stop now (their writes finish); a later
      // message starts a fresh actor on the owner, which restores its state from Cassandra.
      String self = clusterNode.nodeId();
      clusterNode.addViewListener(
          view -> gateway.release(device -> !self.equals(view.ring().ownerOf(device))));
    }
    DeviceGateway transportGateway = clusterNode == null ? gateway : clusterNode.gateway();
    SessionTakeover takeover =
        clusterNode == null ? SessionTakeover.LOCAL_ONLY : clusterNode.sessionTakeover();
    List<PressureGauge> pressure = new ArrayList<>(storage.pressure());
    if (clusterNode != null) {
      pressure.add(clusterNode.forwardingPressure());
    }

    MqttServer mqttServer =
        new MqttServer(
            mqttConfig,
            devices,
            transportGateway,
            deadLetters,
            payloadParser(root),
            pressure,
            metrics,
            takeover);
    mqtt = mqttServer;
    transport.set(mqttServer);
    mqttServer.start();
    Duration forwardDrain = clusterConfig.forwardTimeout().plusSeconds(1);
    onStop(
        "MQTT",
        () -> {
          // Stop taking devices, let every accepted write finish and its PUBACK go out, then close.
          mqttServer.stopAccepting();
          LOG.info("draining in-flight writes (at most {})", actorsConfig.shutdownTimeout());
          if (clusterNode != null) {
            await(clusterNode.gateway().shutdown(), forwardDrain, "forwarded messages");
          }
          await(gateway.shutdown(), drain, "device actors");
          mqttServer.close();
        });

    JwtTokens tokens =
        new JwtTokens(
            jwtSecret, serverConfig.tokenTtl(), serverConfig.refreshTokenTtl(), Clock.systemUTC());
    RestApi api =
        new RestApi(
            serverConfig.adminUsername(),
            password,
            tokens,
            devices,
            queries,
            storage.deadLetterQueries(),
            () -> ready(session, clusterNode),
            metrics);
    ServerBinding binding =
        Http.get(actorSystem)
            .newServerAt(serverConfig.httpHost(), serverConfig.httpPort())
            .bind(api.routes())
            .toCompletableFuture()
            .join();
    http = binding;
    onStop(
        "HTTP",
        () -> await(binding.terminate(Duration.ofSeconds(5)), Duration.ofSeconds(10), "HTTP"));
    LOG.info("[http] listening on {}", binding.localAddress());

    if (serverConfig.demoDevice()) {
      demoDevice =
          DemoDevice.ensure(devices, serverConfig.demoDeviceName(), serverConfig.dataDir());
    }

    if (clusterNode != null) {
      // Last: other nodes forward to this one only once it can serve them.
      clusterNode.join(mqttServer.port(), binding.localAddress().getPort());
      onStop("cluster membership", clusterNode::leave);
    }
  }

  /**
   * Starts this node's cluster membership (gRPC listener, ZooKeeper); it joins the ring only once
   * the listeners are up. Takeover notices close sessions of the transport set later in {@code
   * transport}.
   */
  private ClusterNode startCluster(
      ClusterConfig clusterConfig, DeviceGateway local, AtomicReference<MqttServer> transport) {
    ClusterNode node =
        ClusterNode.start(
            clusterConfig,
            local,
            device -> {
              MqttServer started = transport.get();
              return started != null && started.sessions().closeSession(device);
            },
            metrics);
    onStop("cluster node", node::close);
    cluster = node;
    return node;
  }

  private void onStop(String name, Runnable action) {
    stopSteps.push(new StopStep(name, action));
  }

  /**
   * Ready = Cassandra answers a query (the schema was migrated before the listeners opened) and, in
   * a cluster, this node is on its own ring (connected to ZooKeeper and registered).
   */
  private static CompletionStage<Boolean> ready(CqlSession session, @Nullable ClusterNode node) {
    return session
        .executeAsync("SELECT release_version FROM system.local")
        .thenApply(rows -> rows.one() != null && (node == null || node.claiming()))
        .exceptionally(error -> false);
  }

  private static PayloadParser payloadParser(Config root) {
    return new PayloadParser(
        root.getBoolean("fieldline.payload.type-cast"),
        root.getInt("fieldline.payload.max-string-value-length"));
  }

  public int mqttPort() {
    return started(mqtt).port();
  }

  public int httpPort() {
    return started(http).localAddress().getPort();
  }

  public String adminUsername() {
    return started(config).adminUsername();
  }

  public String adminPassword() {
    return started(adminPassword);
  }

  public Optional<Device> demoDevice() {
    return Optional.ofNullable(demoDevice);
  }

  public DeviceRegistry registry() {
    return started(registry);
  }

  /** The cluster node, when {@code fieldline.cluster.zookeeper} is set. */
  public Optional<ClusterNode> cluster() {
    return Optional.ofNullable(cluster);
  }

  public Optional<EmbeddedCassandra> embeddedCassandra() {
    return Optional.ofNullable(embeddedCassandra);
  }

  public PrometheusMeterRegistry metrics() {
    return metrics;
  }

  /** Stops everything that was started, in reverse order; safe to call more than once. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    LOG.info("shutting down");
    while (!stopSteps.isEmpty()) {
      StopStep step = stopSteps.pop();
      try {
        step.action().run();
      } catch (RuntimeException e) {
        LOG.warn("stopping {} failed: {}", step.name(), e.toString());
      }
    }
    LOG.info("stopped");
  }

  private static void await(CompletionStage<?> stage, Duration timeout, String what) {
    try {
      stage.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn("{} did not stop cleanly within {}: {}", what, timeout, e.toString());
    }
  }

  private static <T> T started(@Nullable T component) {
    if (component == null) {
      throw new IllegalStateException("server not started");
    }
    return component;
  }
}
