package io.fieldline.server;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import io.fieldline.actors.ActorsConfig;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cluster.ClusterConfig;
import io.fieldline.cluster.ClusterNode;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.export.ExportConfig;
import io.fieldline.export.SinkAdmin;
import io.fieldline.fleet.live.LiveData;
import io.fieldline.fleet.ota.OtaConfig;
import io.fieldline.fleet.ota.OtaPackages;
import io.fieldline.fleet.provision.ProvisionConfig;
import io.fieldline.fleet.provision.Provisioning;
import io.fieldline.fleet.rpc.RpcConfig;
import io.fieldline.fleet.rpc.RpcService;
import io.fieldline.server.ws.WsConfig;
import io.fieldline.transport.common.firmware.FirmwareConfig;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.firmware.FirmwareMetrics;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.http.DeviceApiConfig;
import io.fieldline.transport.mqtt.DeviceServices;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: starts the tiers in dependency order, each one built by its own class —
 * {@link StorageTier} (embedded Cassandra, the dao), {@link DeviceTier} (actor system, device
 * actors), {@link ClusterTier} (only with {@code fieldline.cluster.zookeeper}), {@link MqttTier}
 * (the listener) and {@link HttpTier} (REST, health, metrics). Each tier adds its stop steps as it
 * starts; {@link #close()} runs them newest first, which is also what happens when a later start
 * fails. No DI framework: what depends on what is readable in {@link #startAll}, top to bottom.
 *
 * <p>The transport's session registry is built before the cluster and the transport, and handed to
 * both: the cluster closes this node's session of a device another node took over through it (the
 * {@code SessionCloser} port), the transport registers sessions in it. With the storage's cache it
 * makes this node's {@link LocalRevocation}, which the REST API runs (alone on a single node, with
 * a notice to every other node in a cluster) once a credential changed or a device was deleted.
 *
 * <p>Shutdown order: leave the cluster (the other nodes take this node's devices), unbind HTTP,
 * stop accepting MQTT connections, let in-flight writes (local and forwarded) finish and their
 * PUBACKs go out, close connections, stop the cluster node, stop the actors, close the driver, stop
 * the embedded Cassandra. {@link #start} blocks (it waits for Cassandra, and for ZooKeeper in a
 * cluster); call it from {@code main} or a test.
 */
public final class FieldlineServer implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FieldlineServer.class);

  private final StopSteps stops = new StopSteps();
  private final PrometheusMeterRegistry metrics =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private @Nullable ServerConfig config;
  private @Nullable String adminPassword;
  private @Nullable StorageTier storage;
  private @Nullable ClusterTier cluster;
  private @Nullable ExportTier export;
  private @Nullable MqttTier mqtt;
  private @Nullable HttpTier http;
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
    // Every block is validated before anything starts.
    ServerConfig serverConfig = ServerConfig.from(root);
    CassandraConfig cassandraConfig = CassandraConfig.from(root);
    ActorsConfig actorsConfig = ActorsConfig.from(root);
    RpcConfig rpcConfig = RpcConfig.from(root);
    WsConfig wsConfig = WsConfig.from(root);
    // fieldline.http-device (read again by HttpTier), checked with the rest before anything starts.
    DeviceApiConfig.from(root);
    ClusterConfig clusterConfig = ClusterConfig.from(root);
    MqttTransportConfig mqttConfig = MqttTransportConfig.from(root);
    OtaConfig otaConfig = OtaConfig.from(root);
    ProvisionConfig provisionConfig = ProvisionConfig.from(root);
    FirmwareConfig firmwareConfig = FirmwareConfig.from(root);
    WarmUp.Settings warmUp = WarmUp.Settings.from(root);
    ExportConfig exportConfig = ExportConfig.from(root);
    config = serverConfig;
    bindJvmMetrics();
    String password =
        GeneratedSecrets.resolve(
            serverConfig.adminPassword(), serverConfig.dataDir(), "admin-password", 12);
    adminPassword = password;
    String jwtSecret =
        GeneratedSecrets.resolve(
            serverConfig.jwtSecret(), serverConfig.dataDir(), "jwt-secret", 48);

    // In a cluster the feed's log carries the node id the ring knows it by (docs/export.md).
    Config storageRoot =
        clusterConfig.enabled()
            ? root.withValue(
                "fieldline.feed.node", ConfigValueFactory.fromAnyRef(clusterConfig.nodeId()))
            : root;
    StorageTier storageTier =
        StorageTier.start(storageRoot, serverConfig, cassandraConfig, metrics, stops);
    storage = storageTier;
    LocalDeviceEvents localEvents = new LocalDeviceEvents();
    // The device actors write through it: what they store for watched devices is published.
    LiveData live = new LiveData(clusterConfig.nodeId(), localEvents, wsConfig.watchRefresh());
    DeviceTier devices =
        DeviceTier.start(
            root,
            actorsConfig,
            live.publishing(storageTier.storage().telemetryStore()),
            metrics,
            stops);
    // Before any device can connect: the first ones meet a warm message path, then warm MQTT code.
    PayloadParser warmUpParser =
        new PayloadParser(
            serverConfig.payloadTypeCast(), serverConfig.payloadMaxStringValueLength());
    WarmUp.run(devices.gateway(), warmUpParser, warmUp);
    MqttWarmUp.run(
        mqttConfig,
        devices.gateway(),
        storageTier.storage().deadLetters(),
        warmUpParser,
        storageTier.storage().queries(),
        warmUp);
    SessionRegistry sessions = new SessionRegistry();
    LocalRevocation localRevocation = new LocalRevocation(storageTier.storage(), sessions);
    ClusterTier clusterTier =
        ClusterTier.start(
            clusterConfig, devices, sessions, localRevocation, localEvents, metrics, stops);
    cluster = clusterTier;
    DeviceEvents events = clusterTier.events(localEvents);
    live.useEvents(events);
    clusterTier.onMembersChanged(live::membersChanged);
    // After the cluster (it knows which devices moved), before the transports: stopped after
    // they drained, before the cluster and storage.
    ExportTier export =
        ExportTier.start(
            exportConfig,
            storageTier.storage(),
            clusterConfig,
            clusterTier.deviceMoves(),
            metrics,
            stops);
    this.export = export;
    scheduleRefresh(live);
    OtaPackages ota =
        new OtaPackages(
            storageTier.storage().otaPackages(),
            storageTier.storage().deviceRegistry(),
            storageTier.storage().deviceProfiles(),
            storageTier.storage().telemetryStore(),
            storageTier.storage().queries(),
            events,
            otaConfig,
            metrics);
    // One delivery for both device transports: the same chunk bounds, source and meters.
    FirmwareDelivery firmware =
        new FirmwareDelivery(firmwareConfig, ota.firmwareSource(), new FirmwareMetrics(metrics));
    Provisioning provisioning =
        new Provisioning(
            ota.firmwareFollowing(storageTier.storage().deviceProfiles()),
            storageTier.storage().deviceRegistry(),
            storageTier.storage().credentialsStore(),
            provisionConfig,
            metrics);
    MqttTier mqttTier =
        MqttTier.start(
            mqttConfig,
            sessions,
            serverConfig,
            storageTier.storage(),
            devices,
            clusterTier,
            events,
            new DeviceServices(firmware, Optional.of(provisioning)),
            metrics,
            stops);
    mqtt = mqttTier;
    RpcService rpc =
        new RpcService(
            events,
            localEvents,
            storageTier.storage().rpcStore(),
            clusterTier.owns(),
            rpcConfig,
            metrics);
    HttpTier httpTier =
        HttpTier.start(
            serverConfig,
            password,
            jwtSecret,
            storageTier.storage(),
            clusterTier.revocation(localRevocation),
            events,
            devices,
            clusterTier,
            rpc,
            live,
            wsConfig,
            metrics,
            mqttTier,
            ota,
            firmware,
            provisioning,
            export.admin(),
            stops);
    http = httpTier;
    // After HTTP in the list, so before it when stopping: waiting calls answer 503 first.
    stops.add("server-side RPC", rpc::close);
    if (serverConfig.demoDevice()) {
      demoDevice =
          DemoDevice.ensure(
              storageTier.storage().deviceRegistry(),
              serverConfig.demoDeviceName(),
              serverConfig.dataDir());
    }
    clusterTier.join(mqttTier.server().port(), httpTier.port(), stops);
  }

  /** Sink management (export), once started. */
  public Optional<SinkAdmin> sinkAdmin() {
    ExportTier tier = export;
    return tier == null ? Optional.empty() : Optional.of(tier.admin());
  }

  /** Announces the watched devices again now and then (repairs a lost announcement). */
  private void scheduleRefresh(LiveData live) {
    ScheduledExecutorService refresher =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "fieldline-live-refresh");
              thread.setDaemon(true);
              return thread;
            });
    long every = live.refreshInterval().toMillis();
    refresher.scheduleWithFixedDelay(live::refresh, every, every, TimeUnit.MILLISECONDS);
    stops.add("live data refresh", refresher::shutdownNow);
  }

  private void bindJvmMetrics() {
    new JvmMemoryMetrics().bindTo(metrics);
    new JvmGcMetrics().bindTo(metrics);
    new JvmThreadMetrics().bindTo(metrics);
    new ProcessorMetrics().bindTo(metrics);
  }

  public int mqttPort() {
    return started(mqtt).server().port();
  }

  /** The bound port of the MQTT-over-TLS listener, or -1 when no certificate is configured. */
  public int mqttTlsPort() {
    return started(mqtt).server().tlsPort();
  }

  public int httpPort() {
    return started(http).port();
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
    return started(storage).storage().deviceRegistry();
  }

  /** The cluster node, when {@code fieldline.cluster.zookeeper} is set. */
  public Optional<ClusterNode> cluster() {
    return cluster == null ? Optional.empty() : Optional.ofNullable(cluster.node());
  }

  public Optional<EmbeddedCassandra> embeddedCassandra() {
    return storage == null ? Optional.empty() : Optional.ofNullable(storage.embedded());
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
    stops.runAll();
    LOG.info("stopped");
  }

  private static <T> T started(@Nullable T component) {
    if (component == null) {
      throw new IllegalStateException("server not started");
    }
    return component;
  }
}
