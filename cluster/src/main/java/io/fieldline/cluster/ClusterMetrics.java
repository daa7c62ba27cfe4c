package io.fieldline.cluster;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The cluster's meters, {@code fieldline.cluster.*}. Tags come from enums ({@link FailureReason},
 * {@link TakeoverOutcome}, {@link RevocationOutcome}); never from a device or node id. Thread-safe.
 */
public final class ClusterMetrics {

  /** Gauge: members registered in ZooKeeper as this node last saw them, itself included. */
  public static final String MEMBERS = "fieldline.cluster.members";

  /** Gauge: nodes on this node's current ring (0 or members minus itself while it is suspended). */
  public static final String RING_NODES = "fieldline.cluster.ring.nodes";

  /**
   * Gauge: 1 while this node claims ownership of its devices (connected and registered), else 0.
   */
  public static final String CLAIMING = "fieldline.cluster.claiming";

  /** Counter: times the ring was rebuilt with a different set of nodes. */
  public static final String RING_CHANGES = "fieldline.cluster.ring.changes";

  /** Counter: device messages sent to their owner node over gRPC. */
  public static final String FORWARDED = "fieldline.cluster.forwarded";

  /** Counter: forwarded messages that did not end as stored, tagged {@link #REASON}. */
  public static final String FORWARD_FAILURES = "fieldline.cluster.forward.failures";

  /** Timer (histogram): from forwarding a message to the owner's answer, stored ones only. */
  public static final String FORWARD_LATENCY = "fieldline.cluster.forward.latency";

  /** Gauge: forwarded messages not yet answered, all peers. */
  public static final String FORWARDED_INFLIGHT = "fieldline.cluster.forwarded.inflight";

  /** Counter: messages other nodes forwarded to this one (this node is their owner). */
  public static final String RECEIVED = "fieldline.cluster.received";

  /** Counter: takeover notices, tagged {@link #OUTCOME}. */
  public static final String TAKEOVERS = "fieldline.cluster.takeovers";

  /** Counter: credentials revocation notices, tagged {@link #OUTCOME}. */
  public static final String REVOCATIONS = "fieldline.cluster.revocations";

  /** Tag of {@link #FORWARD_FAILURES}: the lower-case {@link FailureReason}. */
  public static final String REASON = "reason";

  /** Tag of {@link #TAKEOVERS} and {@link #REVOCATIONS}: the lower-case outcome. */
  public static final String OUTCOME = "outcome";

  /** Why a forwarded message was not stored. */
  public enum FailureReason {
    /** No answer within {@code forward-timeout}. */
    TIMEOUT,
    /** The stream to the owner broke (owner died, network, owner shut down). */
    STREAM_BROKEN,
    /** {@code max-inflight-per-peer} messages were already in flight to the owner. */
    OVERLOADED,
    /** The owner answered with a rejection (its write failed, it is not in the cluster, ...). */
    OWNER_REJECTED,
    /** The ring named no owner, or the owner left before the message could be sent. */
    NO_OWNER
  }

  /** What became of a takeover notice. */
  public enum TakeoverOutcome {
    /** Sent to a peer, which answered. */
    SENT,
    /** Sending failed or timed out. */
    FAILED,
    /** Dropped because {@code max-pending-takeovers} notices were in flight. */
    DROPPED,
    /** Received from a peer: this node asked its transport to close its session of the device. */
    CLOSED_LOCAL,
    /** Received from a peer, but this node's session of the device is newer: kept. */
    KEPT_NEWER
  }

  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();

  /** What became of a credentials revocation notice. */
  public enum RevocationOutcome {
    /** Sent to a peer, which answered once it had forgotten the device. */
    SENT,
    /** Sending failed or timed out: that peer forgets the device only when its cache expires. */
    FAILED,
    /** Dropped because {@code max-pending-takeovers} notices were in flight. */
    DROPPED,
    /** Received from a peer and done here. */
    RECEIVED
  }

  private final AtomicInteger members = new AtomicInteger();
  private final AtomicInteger ringNodes = new AtomicInteger();
  private final AtomicInteger claiming = new AtomicInteger();
  private final AtomicInteger forwardedInflight = new AtomicInteger();
  private final Counter ringChanges;
  private final Counter forwarded;
  private final Counter received;
  private final Timer forwardLatency;
  private final Map<FailureReason, Counter> failures = new EnumMap<>(FailureReason.class);
  private final Map<TakeoverOutcome, Counter> takeovers = new EnumMap<>(TakeoverOutcome.class);
  private final Map<RevocationOutcome, Counter> revocations =
      new EnumMap<>(RevocationOutcome.class);

  /** Registers every meter at once, so dashboards see zeros rather than gaps. */
  public ClusterMetrics(MeterRegistry registry) {
    this.registry = registry;
    meters.add(
        Gauge.builder(MEMBERS, members, AtomicInteger::get)
            .description("Cluster members registered in ZooKeeper, as this node sees them")
            .register(registry));
    meters.add(
        Gauge.builder(RING_NODES, ringNodes, AtomicInteger::get)
            .description("Nodes on this node's ring")
            .register(registry));
    meters.add(
        Gauge.builder(CLAIMING, claiming, AtomicInteger::get)
            .description("1 while this node claims ownership of its devices")
            .register(registry));
    meters.add(
        Gauge.builder(FORWARDED_INFLIGHT, forwardedInflight, AtomicInteger::get)
            .description("Forwarded device messages not yet answered by their owner")
            .register(registry));
    ringChanges =
        add(
            Counter.builder(RING_CHANGES)
                .description("Ring rebuilds that changed the set of nodes")
                .register(registry));
    forwarded =
        add(
            Counter.builder(FORWARDED)
                .description("Device messages forwarded to their owner node")
                .register(registry));
    received =
        add(
            Counter.builder(RECEIVED)
                .description("Device messages other nodes forwarded to this node")
                .register(registry));
    forwardLatency =
        add(
            Timer.builder(FORWARD_LATENCY)
                .description("Forwarded message to the owner's stored answer")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(30))
                .register(registry));
    for (FailureReason reason : FailureReason.values()) {
      failures.put(
          reason,
          add(
              Counter.builder(FORWARD_FAILURES)
                  .tag(REASON, reason.name().toLowerCase(Locale.ROOT))
                  .description("Forwarded device messages not stored, by reason")
                  .register(registry)));
    }
    for (TakeoverOutcome outcome : TakeoverOutcome.values()) {
      takeovers.put(
          outcome,
          add(
              Counter.builder(TAKEOVERS)
                  .tag(OUTCOME, outcome.name().toLowerCase(Locale.ROOT))
                  .description("Takeover notices, by outcome")
                  .register(registry)));
    }
    for (RevocationOutcome outcome : RevocationOutcome.values()) {
      revocations.put(
          outcome,
          add(
              Counter.builder(REVOCATIONS)
                  .tag(OUTCOME, outcome.name().toLowerCase(Locale.ROOT))
                  .description("Credentials revocation notices, by outcome")
                  .register(registry)));
    }
  }

  private <M extends Meter> M add(M meter) {
    meters.add(meter);
    return meter;
  }

  /** The latest membership snapshot's size. */
  public void members(int count) {
    members.set(count);
  }

  /** The view in force: its ring and this node's claim. */
  public void ring(HashRing ring, boolean claimingNow) {
    ringNodes.set(ring.nodes().size());
    claiming.set(claimingNow ? 1 : 0);
  }

  /** A rebuild changed the ring's set of nodes. */
  public void ringChanged() {
    ringChanges.increment();
  }

  /**
   * A message was handed to a peer stream; pair with {@link #forwardStored} or {@link
   * #forwardFailed}.
   */
  public void forwardStarted() {
    forwarded.increment();
    forwardedInflight.incrementAndGet();
  }

  /** A forwarded message was given up, or answered with a rejection. */
  public void forwardFailed(FailureReason reason) {
    forwardedInflight.decrementAndGet();
    failures.get(reason).increment();
  }

  /** A forwarded message was stored by its owner. */
  public void forwardStored(long startNanos) {
    forwardedInflight.decrementAndGet();
    forwardLatency.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
  }

  /** A message that could not even be handed to a stream (not counted as forwarded). */
  public void forwardRefused(FailureReason reason) {
    failures.get(reason).increment();
  }

  public void received() {
    received.increment();
  }

  public void takeover(TakeoverOutcome outcome) {
    takeovers.get(outcome).increment();
  }

  public void revocation(RevocationOutcome outcome) {
    revocations.get(outcome).increment();
  }

  public double revocations(RevocationOutcome outcome) {
    return revocations.get(outcome).count();
  }

  public int forwardedInflight() {
    return forwardedInflight.get();
  }

  public double forwardFailures(FailureReason reason) {
    return failures.get(reason).count();
  }

  public double takeovers(TakeoverOutcome outcome) {
    return takeovers.get(outcome).count();
  }

  /** Removes every meter (a stopped node must not keep reporting). */
  public void unregister() {
    for (Meter meter : meters) {
      registry.remove(meter);
    }
    meters.clear();
  }
}
