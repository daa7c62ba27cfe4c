package io.fieldline.dao.cassandra.cql;

import io.fieldline.common.StoreException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * The storage layer's Micrometer meters and their names, in one place. Tags come from enums only
 * (bounded cardinality); nothing is tagged by device.
 *
 * <p>Registering is idempotent: several stores sharing one registry and one {@link WriteLimiter}
 * share the same meters. Thread-safe.
 */
public final class StoreMetrics {

  /** Timer (with percentile histogram) of store writes, from call to completion, queue included. */
  public static final String WRITE_LATENCY = "fieldline.store.write.latency";

  /** Gauge: requests running against Cassandra now. */
  public static final String WRITES_INFLIGHT = "fieldline.store.writes.inflight";

  /** Gauge: requests waiting for an in-flight slot. */
  public static final String WRITES_QUEUED = "fieldline.store.writes.queued";

  /** Gauge: telemetry writes (device messages) waiting for a coalesced batch. */
  public static final String WRITES_PENDING = "fieldline.store.writes.pending";

  /** Counter of failed writes, tagged {@code cause} = lower-case {@link StoreException.Kind}. */
  public static final String WRITE_FAILURES = "fieldline.store.write.failures";

  /** Counter of time-series and attribute values written successfully. */
  public static final String ROWS_WRITTEN = "fieldline.store.rows.written";

  /** Counter of partition updates issued (one per table and partition touched by a batch). */
  public static final String MUTATIONS = "fieldline.store.mutations";

  /** Counter of write requests (batches or single statements) sent: Cassandra round trips. */
  public static final String REQUESTS = "fieldline.store.requests";

  /** Writes (device messages) per coalesced request: how much group commit is happening. */
  public static final String WRITES_PER_REQUEST = "fieldline.store.request.writes";

  /**
   * Counter: reads of a {@code devices} row whose credential cannot be read (an unknown type, or
   * columns missing for its type), which then counts as no device.
   */
  public static final String DEVICES_UNREADABLE = "fieldline.store.devices.unreadable";

  /** Gauge: devices in this node's device directory, what the device listing sorts in memory. */
  public static final String DEVICE_DIRECTORY_SIZE = "fieldline.store.devices.directory.size";

  /** Counter: full scans of {@code devices} by the device directory (start, big catch-ups). */
  public static final String DEVICE_DIRECTORY_SCANS = "fieldline.store.devices.directory.scans";

  /**
   * Counter: device creates, updates and deletes that could not be recorded in {@code
   * device_changes}; other nodes' listings miss them until the device changes again or their
   * directory is scanned again.
   */
  public static final String DEVICE_CHANGES_UNRECORDED =
      "fieldline.store.devices.changes.unrecorded";

  /** Gauge: MQTT_BASIC password hashes and checks waiting for a bcrypt thread. */
  public static final String PASSWORD_CHECKS_QUEUED = "fieldline.store.password.checks.queued";

  /** Gauge: client reads (queries of the read port) running against Cassandra now. */
  public static final String READS_INFLIGHT = "fieldline.store.reads.inflight";

  /** Gauge: client reads waiting for a read slot. */
  public static final String READS_QUEUED = "fieldline.store.reads.queued";

  /**
   * Counter of client reads refused before reaching Cassandra, tagged {@code reason} = lower-case
   * {@link ReadLimiter.Refusal}.
   */
  public static final String READS_REFUSED = "fieldline.store.reads.refused";

  /** Tag naming why a read was refused on {@link #READS_REFUSED}. */
  public static final String TAG_REASON = "reason";

  /** Tag naming the kind of write on {@link #WRITE_LATENCY}. */
  public static final String TAG_OP = "op";

  /** Tag naming the failure kind on {@link #WRITE_FAILURES}. */
  public static final String TAG_CAUSE = "cause";

  /** What was written, the values of the {@code op} tag. */
  public enum Op {
    TELEMETRY,
    ATTRIBUTES,
    DEAD_LETTER,
    /** Deletes of attributes and time-series values (REST). */
    DELETE;

    /** The tag value: the lower-case name. */
    public String tag() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Map<Op, Timer> latency = new EnumMap<>(Op.class);
  private final Map<StoreException.Kind, Counter> failures =
      new EnumMap<>(StoreException.Kind.class);
  private final Counter rowsWritten;
  private final Counter mutations;
  private final Counter requests;
  private final DistributionSummary writesPerRequest;
  private final MeterRegistry registry;

  /** Registers the meters, and the gauges of {@code limiter}, in {@code registry}. */
  public StoreMetrics(MeterRegistry registry, WriteLimiter limiter) {
    this.registry = registry;
    for (Op op : Op.values()) {
      latency.put(
          op,
          Timer.builder(WRITE_LATENCY)
              .description("Store write latency, queueing for an in-flight slot included")
              .tag(TAG_OP, op.tag())
              .publishPercentileHistogram()
              .register(registry));
    }
    for (StoreException.Kind kind : StoreException.Kind.values()) {
      failures.put(
          kind,
          Counter.builder(WRITE_FAILURES)
              .description("Store writes that failed, by cause")
              .tag(TAG_CAUSE, kind.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
    rowsWritten = Counter.builder(ROWS_WRITTEN).description("Values written").register(registry);
    mutations =
        Counter.builder(MUTATIONS).description("Partition updates issued").register(registry);
    requests =
        Counter.builder(REQUESTS)
            .description("Write requests sent to Cassandra")
            .register(registry);
    writesPerRequest =
        DistributionSummary.builder(WRITES_PER_REQUEST)
            .description("Writes (device messages) carried by one coalesced request")
            .register(registry);
    // The first limiter registered wins; stores sharing a registry share one limiter.
    if (registry.find(WRITES_INFLIGHT).gauge() == null) {
      Gauge.builder(WRITES_INFLIGHT, limiter, WriteLimiter::inflight)
          .description("Write requests running against Cassandra")
          .register(registry);
      Gauge.builder(WRITES_QUEUED, limiter, WriteLimiter::queued)
          .description("Write requests waiting for an in-flight slot")
          .register(registry);
    }
  }

  /** Registers the gauges and refusal counters of the node's one {@link ReadLimiter}. */
  public static void registerReads(MeterRegistry registry, ReadLimiter reads) {
    Gauge.builder(READS_INFLIGHT, reads, ReadLimiter::inflight)
        .description("Client reads running against Cassandra")
        .register(registry);
    Gauge.builder(READS_QUEUED, reads, ReadLimiter::queued)
        .description("Client reads waiting for a read slot")
        .register(registry);
    for (ReadLimiter.Refusal reason : ReadLimiter.Refusal.values()) {
      FunctionCounter.builder(READS_REFUSED, reads, limiter -> limiter.refused(reason))
          .description("Client reads refused before reaching Cassandra, by reason")
          .tag(TAG_REASON, reason.name().toLowerCase(Locale.ROOT))
          .register(registry);
    }
  }

  /**
   * Registers the pending-writes gauge of the (one) telemetry coalescer; like every Micrometer
   * gauge it holds {@code owner} weakly.
   */
  public <T> void registerPending(T owner, ToDoubleFunction<T> queued) {
    Gauge.builder(WRITES_PENDING, owner, queued)
        .description("Telemetry writes waiting for a coalesced batch")
        .register(registry);
  }

  /** The latency timer of {@code op}. */
  public Timer latency(Op op) {
    return Objects.requireNonNull(latency.get(op)); // one per op
  }

  /** Counts one failed write. */
  public void failed(StoreException.Kind kind) {
    Objects.requireNonNull(failures.get(kind)).increment(); // one per kind
  }

  /** Counts values written successfully. */
  public void written(int rows) {
    rowsWritten.increment(rows);
  }

  /** One coalesced request carrying {@code writes} writes was sent. */
  public void coalesced(int writes) {
    requests.increment();
    writesPerRequest.record(writes);
  }

  /** Counts partition updates and requests issued by one write. */
  public void issued(int partitionUpdates, int requestCount) {
    mutations.increment(partitionUpdates);
    requests.increment(requestCount);
  }
}
