package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.typesafe.config.Config;
import io.fieldline.common.DeviceId;
import io.fieldline.common.deadletter.DeadLetterQueries;
import io.fieldline.common.deadletter.DeadLetterStore;
import io.fieldline.common.device.DeviceCredentialsStore;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.feed.SinkStore;
import io.fieldline.common.ota.OtaPackageStore;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.profile.DeviceProfileStore;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.common.rpc.PersistentRpcStore;
import io.fieldline.dao.cassandra.cql.CassandraSessionFactory;
import io.fieldline.dao.cassandra.cql.ReadLimiter;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.deadletter.CassandraDeadLetterStore;
import io.fieldline.dao.cassandra.feed.CassandraFeedStore;
import io.fieldline.dao.cassandra.feed.CassandraSinkStore;
import io.fieldline.dao.cassandra.feed.FeedConfig;
import io.fieldline.dao.cassandra.feed.FeedWriter;
import io.fieldline.dao.cassandra.ota.CassandraOtaPackageStore;
import io.fieldline.dao.cassandra.registry.CachingDeviceRegistry;
import io.fieldline.dao.cassandra.registry.CassandraDeviceRegistry;
import io.fieldline.dao.cassandra.rpc.CassandraRpcStore;
import io.fieldline.dao.cassandra.schema.KeyIndexBackfill;
import io.fieldline.dao.cassandra.schema.SchemaMigrator;
import io.fieldline.dao.cassandra.telemetry.read.CassandraTelemetryQueries;
import io.fieldline.dao.cassandra.telemetry.write.CassandraTelemetryStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the server needs from Cassandra, built in one call: the session (driver metrics in the
 * given registry), the schema (migrations and their data steps), one shared {@link WriteLimiter}
 * for writes and one {@link ReadLimiter} for client reads (separate budgets: reads can never take
 * the writes' slots), and the stores behind the ports of {@code io.fieldline.common}. This is the
 * one way to build this module, for the server and for tests that need a whole storage; the server
 * wires the ports it hands out into the actors, the transport and the REST API.
 *
 * <p>{@link #start} blocks (connecting, migrating, preparing) and belongs in {@code main}. The
 * getters are thread-safe. {@link #close} drains in-flight writes, then closes the session.
 */
public final class CassandraStorage implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CassandraStorage.class);
  private static final long DRAIN_SECONDS = 10;
  // The own log's lease until the exporter renews it.
  private static final Duration FEED_LEASE_AT_START = Duration.ofSeconds(60);

  private final CqlSession session;
  private final CassandraConfig config;
  private final WriteLimiter limiter;
  private final ReadLimiter readLimiter;
  private final CassandraTelemetryStore telemetryStore;
  private final CassandraTelemetryQueries queries;
  private final CassandraDeviceRegistry devices;
  private final CachingDeviceRegistry deviceCache;
  private final CassandraDeadLetterStore deadLetters;
  private final CassandraRpcStore rpcStore;
  private final CassandraOtaPackageStore otaPackages;
  private final List<PressureGauge> pressure;
  private final @Nullable FeedWriter feed;
  private final CassandraFeedStore feedStore;
  private final CassandraSinkStore sinkStore;
  private final String feedNode;

  private CassandraStorage(
      CqlSession session, CassandraConfig config, FeedConfig feedConfig, MeterRegistry registry) {
    this.session = session;
    this.config = config;
    this.limiter = WriteLimiter.from(config);
    this.feedNode = feedConfig.node();
    this.feed =
        feedConfig.enabled()
            ? new FeedWriter(
                session,
                config.keyspace(),
                feedConfig,
                config.writeConsistency(),
                FEED_LEASE_AT_START.toMillis(),
                System::currentTimeMillis)
            : null;
    this.feedStore =
        new CassandraFeedStore(
            session,
            config.keyspace(),
            config.writeConsistency(),
            feedConfig.retentionSeconds() + 86_400);
    this.sinkStore = new CassandraSinkStore(session, config.keyspace(), config.writeConsistency());
    this.telemetryStore = new CassandraTelemetryStore(session, config, limiter, registry, feed);
    if (feed != null) {
      FeedWriter writer = feed;
      FunctionCounter.builder("fieldline.feed.entries", writer, FeedWriter::appended)
          .description("change feed entries written by this process")
          .register(registry);
      FunctionCounter.builder("fieldline.feed.fenced", writer, FeedWriter::fenced)
          .description(
              "writes completed after this process's feed lease ran out: not acknowledged, the"
                  + " device resends")
          .register(registry);
      Gauge.builder("fieldline.feed.memory.entries", writer, FeedWriter::inMemory)
          .description("change feed entries of this process's log held in memory")
          .register(registry);
    }
    // Client reads wait while any write gauge is overloaded, and start again when it is relieved.
    List<PressureGauge> writeGauges = new ArrayList<>(telemetryStore.pressure());
    writeGauges.add(limiter.pressure());
    this.readLimiter =
        ReadLimiter.from(
            config.reads(), () -> writeGauges.stream().anyMatch(PressureGauge::isOverloaded));
    for (PressureGauge gauge : writeGauges) {
      gauge.subscribe(
          overloaded -> {
            if (!overloaded) {
              readLimiter.drain();
            }
          });
    }
    StoreMetrics.registerReads(registry, readLimiter);
    this.queries = new CassandraTelemetryQueries(session, config, readLimiter);
    this.devices = new CassandraDeviceRegistry(session, config);
    this.deviceCache = new CachingDeviceRegistry(devices, config.deviceCache());
    Gauge.builder(
            StoreMetrics.PASSWORD_CHECKS_QUEUED,
            devices,
            CassandraDeviceRegistry::passwordChecksQueued)
        .description("MQTT_BASIC password checks waiting for a bcrypt thread")
        .register(registry);
    FunctionCounter.builder(
            StoreMetrics.DEVICES_UNREADABLE, devices, CassandraDeviceRegistry::unreadableRows)
        .description("reads of a devices row whose credential cannot be read (counted as absent)")
        .register(registry);
    Gauge.builder(
            StoreMetrics.DEVICE_DIRECTORY_SIZE, devices, CassandraDeviceRegistry::directorySize)
        .description("devices in this node's device directory (the device listing)")
        .register(registry);
    FunctionCounter.builder(
            StoreMetrics.DEVICE_DIRECTORY_SCANS,
            devices,
            CassandraDeviceRegistry::directoryFullScans)
        .description("full scans of the devices table by this node's device directory")
        .register(registry);
    FunctionCounter.builder(
            StoreMetrics.DEVICE_CHANGES_UNRECORDED,
            devices,
            CassandraDeviceRegistry::unrecordedChanges)
        .description("device changes other nodes' directories could not be told of")
        .register(registry);
    // A device another node changed may be cached here with its old name or type.
    devices.onDeviceChanged(deviceCache::forget);
    loadDevices(
        deviceCache,
        devices,
        config.deviceCache().preload() ? config.deviceCache().maxSize() * 9 / 10 : 0);
    this.deadLetters = new CassandraDeadLetterStore(session, config, limiter, registry);
    this.rpcStore = new CassandraRpcStore(session, config, limiter);
    this.otaPackages = new CassandraOtaPackageStore(session, config, limiter);
    this.pressure = List.copyOf(writeGauges);
  }

  // One scan of devices at start fills the device directory and, up to preloadLimit devices, the
  // credential cache (a tenth of it stays free for new devices). A scan that fails (a cold or busy
  // Cassandra) leaves the directory to the first listing and the cache to fill itself on CONNECT.
  private static void loadDevices(
      CachingDeviceRegistry cache, CassandraDeviceRegistry devices, int preloadLimit) {
    long started = System.nanoTime();
    AtomicInteger preloaded = new AtomicInteger();
    try {
      int listed =
          devices.loadDirectory(
              device -> {
                // One device at a time, on the scan's thread.
                if (preloaded.get() < preloadLimit) {
                  preloaded.addAndGet(cache.preload(List.of(device)));
                }
              });
      LOG.info(
          "devices: {} in the directory, {} preloaded in the credential cache, in {} ms",
          listed,
          preloaded.get(),
          (System.nanoTime() - started) / 1_000_000);
    } catch (RuntimeException e) {
      LOG.warn(
          "devices: start-up scan failed, the directory loads at the first listing and devices"
              + " are looked up as they connect: {}",
          e.toString());
    }
  }

  /**
   * Connects, migrates the schema (unless {@code create-schema = false}) and prepares every store.
   * Blocks; call from {@code main}.
   *
   * @param root the resolved application configuration (its {@code datastax-java-driver} block
   *     configures the driver)
   * @param config {@code fieldline.cassandra}, already read and validated from {@code root}
   * @param registry where store and driver metrics go
   * @param defaultContactPoints used when {@code fieldline.cassandra.contact-points} is empty (the
   *     embedded node's CQL address)
   */
  public static CassandraStorage start(
      Config root,
      CassandraConfig config,
      MeterRegistry registry,
      List<InetSocketAddress> defaultContactPoints) {
    CqlSession session = CassandraSessionFactory.open(root, config, defaultContactPoints, registry);
    try {
      if (config.createSchema()) {
        migrateSchema(session, config);
      }
      return new CassandraStorage(session, config, FeedConfig.from(root), registry);
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
  }

  /**
   * Creates the keyspace {@code config.keyspace()} if missing and applies every schema version not
   * recorded in it, each with its data step; what {@link #start} does with {@code create-schema =
   * true}, for a caller that owns its session (a test preparing a keyspace for several servers).
   * Blocks.
   *
   * @return the versions applied by this call, oldest first
   */
  public static List<Integer> migrateSchema(CqlSession session, CassandraConfig config) {
    List<Integer> applied =
        new SchemaMigrator(session, config.keyspace())
            .migrate(
                config.replication(),
                config.deadLetterTtl().toSeconds(),
                KeyIndexBackfill.dataSteps(session, config));
    LOG.info(
        "[cql] schema of keyspace {} ready at version {} (migrations applied now: {})",
        config.keyspace(),
        SchemaMigrator.latestVersion(),
        applied);
    return applied;
  }

  /** The session, for components that need raw CQL (the readiness check). */
  CqlSession session() {
    return session;
  }

  /**
   * Whether Cassandra answers a query now, for the readiness check: completes with false, never
   * exceptionally, when it does not. Takes no limiter slot.
   */
  public CompletionStage<Boolean> reachable() {
    return session
        .executeAsync("SELECT release_version FROM system.local")
        .thenApply(rows -> rows.one() != null)
        .exceptionally(error -> false);
  }

  /** The parsed configuration. */
  CassandraConfig config() {
    return config;
  }

  /** Telemetry and attribute writes, and the latest values device actors read when asked. */
  public TelemetryStore telemetryStore() {
    return telemetryStore;
  }

  /**
   * The client read side (REST, WebSocket, device attribute requests): keys, latest values,
   * history, attributes, on the node's read budget; {@code forUser} adds a user's own share.
   */
  public TelemetryQueries queries() {
    return queries;
  }

  /** Devices and their credential lookups, with the credential cache in front (CONNECT). */
  public DeviceRegistry deviceRegistry() {
    return deviceCache;
  }

  /** Device profiles, and the profile of each device; not cached (never read on CONNECT). */
  public DeviceProfileStore deviceProfiles() {
    return devices.deviceProfiles();
  }

  /**
   * Reading and replacing device credentials (the REST API); replacing one forgets this node's
   * cached lookups of the device.
   */
  public DeviceCredentialsStore credentialsStore() {
    return deviceCache;
  }

  /**
   * Forgets this node's cached lookups of {@code device} (its credential changed or it was deleted,
   * maybe on another node). Never blocks; this node's half of a credentials revocation.
   */
  public void forgetDevice(DeviceId device) {
    deviceCache.forget(device);
  }

  /** Where the transport keeps payloads it could not parse. */
  /** This process's change feed log, or empty when {@code fieldline.feed.enabled} is off. */
  public Optional<LocalFeed> localFeed() {
    return Optional.ofNullable(feed);
  }

  /** The node id recorded with this process's feed log ({@code fieldline.feed.node}). */
  public String feedNode() {
    return feedNode;
  }

  /** The change feed's logs and cursors. */
  public CassandraFeedStore feedStore() {
    return feedStore;
  }

  /** Export sinks, their statuses and dead letters. */
  public SinkStore sinkStore() {
    return sinkStore;
  }

  public DeadLetterStore deadLetters() {
    return deadLetters;
  }

  /** The dead letters read back, for the REST API. */
  public DeadLetterQueries deadLetterQueries() {
    return deadLetters;
  }

  /** Persistent server-side RPCs, kept for {@code rpc-ttl}. */
  public PersistentRpcStore rpcStore() {
    return rpcStore;
  }

  /** OTA packages, their data and the devices' firmware assignments. */
  public OtaPackageStore otaPackages() {
    return otaPackages;
  }

  /**
   * Every gauge the transport must watch, pausing socket reads while any is overloaded: the
   * telemetry writes waiting for or carried by a coalesced batch (when coalescing is on), then the
   * requests in flight or queued in the global limiter.
   */
  public List<PressureGauge> pressure() {
    return pressure;
  }

  /** Completes once no write is in flight or queued. */
  CompletionStage<Void> drained() {
    return limiter.whenIdle();
  }

  /**
   * Waits up to {@value #DRAIN_SECONDS} seconds for in-flight and queued writes to finish, then
   * closes the session (which lets the driver's own in-flight requests complete). Blocks.
   */
  @Override
  public void close() {
    close(Duration.ofSeconds(DRAIN_SECONDS));
  }

  /**
   * Waits up to {@code drain} for in-flight and queued writes to finish, then closes the session.
   * The server passes zero: by then the device actors have had their own drain, and no PUBACK can
   * follow a write that completes later, since the transport is closed. Blocks.
   */
  public void close(Duration drain) {
    try {
      if (!drain.isZero()) {
        limiter.whenIdle().toCompletableFuture().get(drain.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "[cql] closing with {} writes still in flight", limiter.inflight() + limiter.queued());
    }
    devices.close();
    session.close();
  }
}
