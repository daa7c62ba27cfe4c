package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.typesafe.config.Config;
import io.fieldline.common.PressureGauge;
import io.fieldline.dao.cassandra.internal.schema.SchemaMigrator;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything the server needs from Cassandra, built in one call: the session, the schema, one
 * shared {@link WriteLimiter}, and the stores. This is the module's composition root; the server
 * wires the ports it exposes into the actors and the transport.
 *
 * <p>{@link #start} blocks (connecting, migrating, preparing) and belongs in {@code main}. The
 * getters are thread-safe. {@link #close} drains in-flight writes, then closes the session.
 */
public final class CassandraStorage implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(CassandraStorage.class);

  private final CqlSession session;
  private final CassandraConfig config;
  private final WriteLimiter limiter;
  private final CassandraTelemetryStore telemetryStore;
  private final CassandraTelemetryQueries queries;
  private final CassandraDeviceRegistry deviceRegistry;
  private final CachingDeviceRegistry cachingDeviceRegistry;
  private final CassandraDeadLetterStore deadLetters;

  private CassandraStorage(CqlSession session, CassandraConfig config, MeterRegistry registry) {
    this.session = session;
    this.config = config;
    this.limiter = WriteLimiter.from(config);
    this.telemetryStore = new CassandraTelemetryStore(session, config, limiter, registry);
    this.queries = new CassandraTelemetryQueries(session, config);
    this.deviceRegistry = new CassandraDeviceRegistry(session, config);
    this.cachingDeviceRegistry = new CachingDeviceRegistry(deviceRegistry, config.deviceCache());
    this.deadLetters = new CassandraDeadLetterStore(session, config, limiter, registry);
  }

  /**
   * Reads {@code fieldline.cassandra}, connects, migrates the schema (unless {@code create-schema =
   * false}) and prepares every store. Blocks; call from {@code main}.
   *
   * @param root the resolved application configuration
   * @param registry where store and driver metrics go
   * @param defaultContactPoints used when {@code fieldline.cassandra.contact-points} is empty (the
   *     embedded node's CQL address)
   * @throws IllegalArgumentException for invalid configuration, listing every problem
   */
  public static CassandraStorage start(
      Config root, MeterRegistry registry, List<InetSocketAddress> defaultContactPoints) {
    CassandraConfig config = CassandraConfig.from(root);
    CqlSession session = CassandraSessionFactory.open(root, config, defaultContactPoints, registry);
    try {
      if (config.createSchema()) {
        List<Integer> applied =
            new SchemaMigrator(session, config.keyspace())
                .migrate(
                    config.replication(),
                    config.deadLetterTtl().getSeconds(),
                    KeyIndexBackfill.dataSteps(session, config));
        LOG.info(
            "[cql] keyspace {} at schema version {} (applied now: {})",
            config.keyspace(),
            SchemaMigrator.latestVersion(),
            applied);
      }
      return new CassandraStorage(session, config, registry);
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
  }

  /** The session, for components that need raw CQL (health checks). */
  public CqlSession session() {
    return session;
  }

  /** The parsed configuration. */
  public CassandraConfig config() {
    return config;
  }

  /** The {@link io.fieldline.common.TelemetryStore} port. */
  public CassandraTelemetryStore telemetryStore() {
    return telemetryStore;
  }

  /** REST read side. */
  public CassandraTelemetryQueries queries() {
    return queries;
  }

  /** The {@link io.fieldline.common.DeviceRegistry} port with the token cache in front. */
  public CachingDeviceRegistry deviceRegistry() {
    return cachingDeviceRegistry;
  }

  /** The registry without cache (admin paths that must read through). */
  public CassandraDeviceRegistry uncachedDeviceRegistry() {
    return deviceRegistry;
  }

  /** The {@link io.fieldline.common.DeadLetterStore} port, with a read method. */
  public CassandraDeadLetterStore deadLetters() {
    return deadLetters;
  }

  /** The global write bound shared by the stores. */
  public WriteLimiter writeLimiter() {
    return limiter;
  }

  /** In-flight plus queued writes; the transport pauses socket reads while it is overloaded. */
  public PressureGauge pressure() {
    return limiter.pressure();
  }

  /** Completes once no write is in flight or queued. */
  public CompletionStage<Void> drained() {
    return limiter.whenIdle();
  }

  /** Waits up to 10 seconds for in-flight writes to finish, then closes the session. */
  @Override
  public void close() {
    close(Duration.ofSeconds(10));
  }

  /** Waits up to {@code drainTimeout} for in-flight writes to finish, then closes the session. */
  public void close(Duration drainTimeout) {
    try {
      CompletableFuture<Void> idle = limiter.whenIdle().toCompletableFuture();
      idle.get(drainTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "[cql] closing with {} writes still in flight", limiter.inflight() + limiter.queued());
    }
    session.close();
  }
}
