package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Fieldline's Cassandra settings, the {@code fieldline.cassandra} block of the configuration (each
 * key is documented in this module's {@code reference.conf}). The driver's own options stay in the
 * {@code datastax-java-driver} block and are read by the driver itself.
 *
 * @param contactPoints first nodes to contact (unresolved); empty means "use the embedded node"
 * @param keyspace keyspace holding every Fieldline table
 * @param replication CQL replication map used when the keyspace is created
 * @param createSchema whether to create the keyspace and migrate the schema at startup
 * @param tsPartitioning time unit of {@code ts_kv} partitions
 * @param tsTtlSeconds TTL of time-series rows in seconds, 0 for none
 * @param deadLetterTtl how long dead letters are kept
 * @param rpcTtl how long persistent server-side RPCs are kept, whatever their status
 * @param writeConsistency consistency level of data writes
 * @param maxInflight most write requests outstanding to Cassandra
 * @param maxQueued most write requests waiting for a slot
 * @param maxBatchStatements most statements in one batch
 * @param maxBatchBytes most estimated bytes of keys and values in one batch
 * @param coalesce group commit: merging the messages of many devices into shared batches
 * @param partitionsCacheSize how many (device, partition) pairs are remembered as written
 * @param deviceCache the credential cache in front of the registry
 * @param passwordHashing how MQTT_BASIC passwords are hashed and checked
 * @param reads the node's budget for client reads, separate from the writes'
 */
public record CassandraConfig(
    List<InetSocketAddress> contactPoints,
    String keyspace,
    String replication,
    boolean createSchema,
    TsPartitioning tsPartitioning,
    int tsTtlSeconds,
    Duration deadLetterTtl,
    Duration rpcTtl,
    DefaultConsistencyLevel writeConsistency,
    int maxInflight,
    int maxQueued,
    int maxBatchStatements,
    int maxBatchBytes,
    CoalesceConfig coalesce,
    int partitionsCacheSize,
    DeviceCacheConfig deviceCache,
    PasswordHashingConfig passwordHashing,
    ReadsConfig reads) {

  /** The configuration path of this block. */
  public static final String PATH = "fieldline.cassandra";

  private static final String DRIVER_PATH = "datastax-java-driver";
  private static final String THROTTLER_CLASS = "advanced.throttler.class";
  private static final String PASS_THROUGH = "PassThroughRequestThrottler";

  /** Cassandra's longest TTL (20 years). */
  public static final int MAX_TTL_SECONDS = 630_720_000;

  private static final Pattern KEYSPACE = Pattern.compile("[a-z][a-z0-9_]{0,47}");
  private static final Pattern REPLICATION = Pattern.compile("\\{\\s*'class'\\s*:.*}");

  /**
   * The credential cache in front of the device registry.
   *
   * @param ttl how long a found device is served from memory
   * @param negativeTtl how long an unknown credential is remembered as unknown
   * @param maxSize most lookups kept
   * @param preload whether every device (up to {@code maxSize}) is cached at start
   */
  public record DeviceCacheConfig(
      Duration ttl, Duration negativeTtl, int maxSize, boolean preload) {
    public DeviceCacheConfig {
      Objects.requireNonNull(ttl, "ttl");
      Objects.requireNonNull(negativeTtl, "negativeTtl");
    }
  }

  /**
   * bcrypt of MQTT_BASIC passwords.
   *
   * @param cost the bcrypt cost (log2 of the rounds) of new hashes
   * @param threads threads that hash and check passwords
   * @param maxQueued most hashes and checks waiting for a thread
   */
  public record PasswordHashingConfig(int cost, int threads, int maxQueued) {}

  /**
   * The node's budget for client reads (REST, WebSocket, device attribute requests), separate from
   * the write path's {@code max-inflight}.
   *
   * @param maxInflight most reads (queries of the read port) running at once
   * @param maxQueued most reads waiting for a slot
   * @param maxPerUser most reads of one logged-in user running or waiting
   * @param maxWait longest wait for a slot before the read is refused
   * @param statementsPerQuery most CQL statements one read has outstanding at once
   */
  public record ReadsConfig(
      int maxInflight, int maxQueued, int maxPerUser, Duration maxWait, int statementsPerQuery) {
    public ReadsConfig {
      Objects.requireNonNull(maxWait, "maxWait");
    }
  }

  /**
   * Group commit of telemetry writes.
   *
   * @param enabled whether messages of different devices share batches
   * @param maxBatchesInFlight most coalesced batches outstanding at once
   * @param maxBatchStatements most statements in one coalesced batch
   * @param maxBatchBytes most estimated bytes in one coalesced batch
   * @param maxQueuedWrites most messages waiting for a batch
   */
  public record CoalesceConfig(
      boolean enabled,
      int maxBatchesInFlight,
      int maxBatchStatements,
      int maxBatchBytes,
      int maxQueuedWrites) {}

  public CassandraConfig {
    contactPoints = List.copyOf(contactPoints);
    Objects.requireNonNull(keyspace, "keyspace");
    Objects.requireNonNull(replication, "replication");
    Objects.requireNonNull(tsPartitioning, "tsPartitioning");
    Objects.requireNonNull(deadLetterTtl, "deadLetterTtl");
    Objects.requireNonNull(rpcTtl, "rpcTtl");
    Objects.requireNonNull(writeConsistency, "writeConsistency");
    Objects.requireNonNull(deviceCache, "deviceCache");
    Objects.requireNonNull(coalesce, "coalesce");
    Objects.requireNonNull(passwordHashing, "passwordHashing");
    Objects.requireNonNull(reads, "reads");
  }

  /**
   * Reads and validates the {@code fieldline.cassandra} block of a resolved configuration.
   *
   * @throws IllegalArgumentException listing every invalid or missing key at once
   */
  public static CassandraConfig from(Config root) {
    ConfigReader r = ConfigReader.of(root, PATH);
    List<InetSocketAddress> contactPoints =
        r.parsed("contact-points", List.of(), CassandraConfig::parseContactPoints);
    String keyspace = r.string("keyspace");
    r.check(KEYSPACE.matcher(keyspace).matches(), "keyspace", "must match " + KEYSPACE.pattern());
    String replication = r.string("replication");
    r.check(
        REPLICATION.matcher(replication).matches(),
        "replication",
        "must be a CQL map literal with a 'class', e.g."
            + " {'class':'SimpleStrategy','replication_factor':1}");
    boolean createSchema = r.bool("create-schema");
    TsPartitioning partitioning = r.oneOf("ts-partitioning", TsPartitioning.class);
    int ttl = r.integer("ts-ttl", 0, MAX_TTL_SECONDS);
    Duration deadLetterTtl = r.duration("dead-letter-ttl");
    r.check(
        deadLetterTtl.getSeconds() >= 1 && deadLetterTtl.getSeconds() <= MAX_TTL_SECONDS,
        "dead-letter-ttl",
        "must be between 1 second and 20 years");
    Duration rpcTtl = r.duration("rpc-ttl");
    r.check(
        rpcTtl.getSeconds() >= 1 && rpcTtl.getSeconds() <= MAX_TTL_SECONDS,
        "rpc-ttl",
        "must be between 1 second and 20 years");
    DefaultConsistencyLevel writeConsistency =
        r.oneOf("write-consistency", DefaultConsistencyLevel.class);
    r.check(
        !writeConsistency.isSerial(),
        "write-consistency",
        "must not be a serial consistency level");
    int maxInflight = r.integer("max-inflight", 1);
    int maxQueued = r.integer("max-queued", 0);
    int maxBatch = r.integer("max-batch-statements", 2);
    long maxBatchBytes = r.bytes("max-batch-bytes", 1024, 1024 * 1024);
    boolean coalesce = r.bool("coalesce-writes");
    int coalesceBatches = r.integer("coalesce.max-batches-in-flight", 1);
    // The native protocol counts a batch's statements in an unsigned short.
    int coalesceStatements = r.integer("coalesce.max-batch-statements", 2, 65_535);
    long coalesceBytes = r.bytes("coalesce.max-batch-bytes", 1024, 1024 * 1024);
    int coalesceQueued = r.integer("coalesce.max-queued-writes", 4);
    int partitionsCache = r.integer("partitions-cache-size", 1);
    Duration cacheTtl = r.nonNegativeDuration("device-cache.ttl");
    Duration negativeTtl = r.nonNegativeDuration("device-cache.negative-ttl");
    int cacheSize = r.integer("device-cache.max-size", 1);
    boolean cachePreload = r.bool("device-cache.preload");
    // bcrypt's own bounds are 4..31; above 20 one CONNECT would cost minutes.
    int hashCost = r.integer("password-hashing.cost", 4, 20);
    int hashThreads = r.integer("password-hashing.threads", 1, 64);
    int hashQueued = r.integer("password-hashing.max-queued", 0);
    ReadsConfig reads =
        new ReadsConfig(
            r.integer("reads.max-inflight", 1, 1024),
            r.integer("reads.max-queued", 0),
            r.integer("reads.max-per-user", 1),
            r.positiveDuration("reads.max-wait"),
            r.integer("reads.statements-per-query", 1, 64));
    // docs/storage.md section 4: the limiters above are the session's throttler; a driver
    // throttler would be a second queue, behind them and unwatched.
    ConfigReader driver = ConfigReader.of(root, DRIVER_PATH);
    String throttler = driver.string(THROTTLER_CLASS);
    driver.check(
        throttler.equals(PASS_THROUGH) || throttler.endsWith("." + PASS_THROUGH),
        THROTTLER_CLASS,
        "must stay "
            + PASS_THROUGH
            + ": fieldline.cassandra.max-inflight, max-queued and reads bound the requests to"
            + " Cassandra");
    return r.validated(
        new CassandraConfig(
            contactPoints,
            keyspace,
            replication,
            createSchema,
            partitioning,
            ttl,
            deadLetterTtl,
            rpcTtl,
            writeConsistency,
            maxInflight,
            maxQueued,
            maxBatch,
            (int) maxBatchBytes,
            new CoalesceConfig(
                coalesce, coalesceBatches, coalesceStatements, (int) coalesceBytes, coalesceQueued),
            partitionsCache,
            new DeviceCacheConfig(cacheTtl, negativeTtl, cacheSize, cachePreload),
            new PasswordHashingConfig(hashCost, hashThreads, hashQueued),
            reads),
        List.of(driver));
  }

  /**
   * Whether latest values are derived from the time-series rows (no per-message upsert of {@code
   * ts_kv_latest}): when rows never expire. With a TTL, {@code ts_kv_latest} is written with every
   * message so that latest values outlive their rows (docs/storage.md).
   */
  public boolean derivedLatest() {
    return tsTtlSeconds == 0;
  }

  /** A copy with another time-series TTL, in seconds. */
  public CassandraConfig withTsTtlSeconds(int seconds) {
    return new CassandraConfig(
        contactPoints,
        keyspace,
        replication,
        createSchema,
        tsPartitioning,
        seconds,
        deadLetterTtl,
        rpcTtl,
        writeConsistency,
        maxInflight,
        maxQueued,
        maxBatchStatements,
        maxBatchBytes,
        coalesce,
        partitionsCacheSize,
        deviceCache,
        passwordHashing,
        reads);
  }

  /**
   * Parses {@code "host:port,host:port"}; a missing port means 9042, IPv6 hosts go in brackets.
   *
   * @throws IllegalArgumentException on a malformed entry
   */
  static List<InetSocketAddress> parseContactPoints(String text) {
    List<InetSocketAddress> points = new ArrayList<>();
    for (String raw : text.split(",")) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      String host = entry;
      int port = 9042;
      int colon = entry.lastIndexOf(':');
      boolean bracketed = entry.startsWith("[");
      if (colon > 0 && (!bracketed || colon > entry.indexOf(']'))) {
        host = entry.substring(0, colon);
        try {
          port = Integer.parseInt(entry.substring(colon + 1));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("bad port in contact point '" + entry + "'");
        }
      }
      if (bracketed) {
        host = host.substring(1, host.length() - 1);
      }
      if (host.isEmpty() || port < 1 || port > 65_535) {
        throw new IllegalArgumentException("bad contact point '" + entry + "'");
      }
      points.add(InetSocketAddress.createUnresolved(host, port));
    }
    return points;
  }
}
