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
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The cluster's meters, {@code fieldline.cluster.*}. Tags come from enums ({@link FailureReason},
 * {@link TakeoverOutcome}, {@link RevocationOutcome}, {@link EventSendOutcome}, {@link
 * EventReceiveOutcome}, {@link ProgressReceiveOutcome}); never from a device or node id.
 * Thread-safe.
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

  /**
   * Counter: device events this node sent to a peer, tagged {@link #OUTCOME} ({@link
   * EventSendOutcome}); one per peer and event.
   */
  public static final String EVENTS_SENT = "fieldline.cluster.events.sent";

  /** Counter: device events other nodes sent here, tagged {@link #OUTCOME}. */
  public static final String EVENTS_RECEIVED = "fieldline.cluster.events.received";

  /** Gauge: events and RPC progress reports sent to peers and not yet answered, all peers. */
  public static final String EVENTS_INFLIGHT = "fieldline.cluster.events.inflight";

  /**
   * Counter: RPC progress reports sent back to the node of the RPC's caller, tagged {@link
   * #OUTCOME} ({@link EventSendOutcome}).
   */
  public static final String RPC_PROGRESS_SENT = "fieldline.cluster.rpc.progress.sent";

  /** Counter: RPC progress reports other nodes sent here, tagged {@link #OUTCOME}. */
  public static final String RPC_PROGRESS_RECEIVED = "fieldline.cluster.rpc.progress.received";

  /** Gauge: RPC callers on this node that other nodes may still report progress to. */
  public static final String RPC_CALLS_PENDING = "fieldline.cluster.rpc.calls.pending";

  /**
   * Counter: RPCs offered to this node's listeners only, because {@code max-pending-rpc-calls}
   * callers were already waiting for other nodes.
   */
  public static final String RPC_CALLS_REFUSED = "fieldline.cluster.rpc.calls.refused";

  /** Tag of {@link #FORWARD_FAILURES}: the lower-case {@link FailureReason}. */
  public static final String REASON = "reason";

  /** Tag of the outcome counters ({@link #TAKEOVERS}, {@link #EVENTS_SENT}...), lower case. */
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

  /** What became of an event or an RPC progress report sent to a peer. */
  public enum EventSendOutcome {
    /** The peer answered (for an event, with how many of its listeners took it). */
    ANSWERED,
    /** The stream to the peer broke, or could not be opened: counted as no listener. */
    FAILED,
    /** No answer within {@code event-timeout}: counted as no listener. */
    TIMEOUT,
    /**
     * Not sent: {@code max-inflight-events-per-peer} messages of its kind (events, or progress
     * reports) were in flight to the peer, or (a progress report) the caller's node is no longer a
     * member.
     */
    DROPPED
  }

  /** What became of an event another node sent here. */
  public enum EventReceiveOutcome {
    /** At least one listener here took it. */
    TAKEN,
    /** No listener here took it (the device has no session here, or it did not subscribe). */
    NOT_TAKEN,
    /** It could not be decoded (answered as taken by none). */
    MALFORMED
  }

  /** What became of an RPC progress report another node sent here. */
  public enum ProgressReceiveOutcome {
    /** The caller still waited: the step was passed to its callback. */
    DELIVERED,
    /** No such call here any more (settled, expired, or this node restarted): dropped. */
    UNKNOWN_CALL,
    /** It could not be decoded: dropped. */
    MALFORMED
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
  private final Map<TakeoverOutcome, Counter> takeovers;
  private final Map<RevocationOutcome, Counter> revocations;
  private final Map<EventSendOutcome, Counter> eventsSent;
  private final Map<EventReceiveOutcome, Counter> eventsReceived;
  private final Map<EventSendOutcome, Counter> progressSent;
  private final Map<ProgressReceiveOutcome, Counter> progressReceived;
  private final AtomicInteger eventsInflight = new AtomicInteger();
  private final AtomicInteger rpcCallsPending = new AtomicInteger();
  private final Counter rpcCallsRefused;

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
    takeovers = outcomes(TakeoverOutcome.class, TAKEOVERS, "Takeover notices, by outcome");
    revocations =
        outcomes(
            RevocationOutcome.class, REVOCATIONS, "Credentials revocation notices, by outcome");
    eventsSent =
        outcomes(EventSendOutcome.class, EVENTS_SENT, "Device events sent to peers, by outcome");
    eventsReceived =
        outcomes(
            EventReceiveOutcome.class, EVENTS_RECEIVED, "Device events from peers, by outcome");
    progressSent =
        outcomes(
            EventSendOutcome.class,
            RPC_PROGRESS_SENT,
            "RPC progress reports sent to the caller's node, by outcome");
    progressReceived =
        outcomes(
            ProgressReceiveOutcome.class,
            RPC_PROGRESS_RECEIVED,
            "RPC progress reports from peers, by outcome");
    meters.add(
        Gauge.builder(EVENTS_INFLIGHT, eventsInflight, AtomicInteger::get)
            .description("Device events and RPC progress reports sent to peers, not yet answered")
            .register(registry));
    meters.add(
        Gauge.builder(RPC_CALLS_PENDING, rpcCallsPending, AtomicInteger::get)
            .description("RPC callers here that other nodes may still report progress to")
            .register(registry));
    rpcCallsRefused =
        add(
            Counter.builder(RPC_CALLS_REFUSED)
                .description("RPCs offered to this node's listeners only: too many callers waiting")
                .register(registry));
  }

  private <E extends Enum<E>> Map<E, Counter> outcomes(
      Class<E> type, String name, String description) {
    Map<E, Counter> counters = new EnumMap<>(type);
    for (E outcome : type.getEnumConstants()) {
      counters.put(
          outcome,
          add(
              Counter.builder(name)
                  .tag(OUTCOME, outcome.name().toLowerCase(Locale.ROOT))
                  .description(description)
                  .register(registry)));
    }
    return counters;
  }

  // Every enum constant has its counter (registered in the constructor).
  private static <E extends Enum<E>> Counter of(Map<E, Counter> counters, E key) {
    return Objects.requireNonNull(counters.get(key));
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
   * A message was handed to a peer stream; it ends with {@link #forwardStored} or {@link
   * #forwardFailed}.
   */
  public void forwardStarted() {
    forwarded.increment();
  }

  /** A forwarded message became ({@code +1}) or stopped being ({@code -1}) unanswered. */
  public void forwardInflight(int delta) {
    forwardedInflight.addAndGet(delta);
  }

  /** A forwarded message was given up, or answered with a rejection. */
  public void forwardFailed(FailureReason reason) {
    of(failures, reason).increment();
  }

  /** A forwarded message was stored by its owner. */
  public void forwardStored(long startNanos) {
    forwardLatency.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
  }

  /** A message that could not even be handed to a stream (not counted as forwarded). */
  public void forwardRefused(FailureReason reason) {
    of(failures, reason).increment();
  }

  public void received() {
    received.increment();
  }

  public void takeover(TakeoverOutcome outcome) {
    of(takeovers, outcome).increment();
  }

  public void revocation(RevocationOutcome outcome) {
    of(revocations, outcome).increment();
  }

  public double revocations(RevocationOutcome outcome) {
    return of(revocations, outcome).count();
  }

  /** A device event sent to one peer ended. */
  public void eventSent(EventSendOutcome outcome) {
    of(eventsSent, outcome).increment();
  }

  public void eventReceived(EventReceiveOutcome outcome) {
    of(eventsReceived, outcome).increment();
  }

  /** An RPC progress report sent to the caller's node ended. */
  public void progressSent(EventSendOutcome outcome) {
    of(progressSent, outcome).increment();
  }

  public void progressReceived(ProgressReceiveOutcome outcome) {
    of(progressReceived, outcome).increment();
  }

  /** An event or progress report went on a stream to a peer ({@code +1}) or ended ({@code -1}). */
  public void eventsInflight(int delta) {
    eventsInflight.addAndGet(delta);
  }

  /** An RPC caller started ({@code +1}) or stopped ({@code -1}) waiting for other nodes. */
  public void rpcCallsPending(int delta) {
    rpcCallsPending.addAndGet(delta);
  }

  public void rpcCallRefused() {
    rpcCallsRefused.increment();
  }

  public double eventsSent(EventSendOutcome outcome) {
    return of(eventsSent, outcome).count();
  }

  public double eventsReceived(EventReceiveOutcome outcome) {
    return of(eventsReceived, outcome).count();
  }

  public double progressReportsSent(EventSendOutcome outcome) {
    return of(progressSent, outcome).count();
  }

  public double progressReportsReceived(ProgressReceiveOutcome outcome) {
    return of(progressReceived, outcome).count();
  }

  public int eventsInflight() {
    return eventsInflight.get();
  }

  public int rpcCallsPending() {
    return rpcCallsPending.get();
  }

  public double rpcCallsRefused() {
    return rpcCallsRefused.count();
  }

  public int forwardedInflight() {
    return forwardedInflight.get();
  }

  public double forwardFailures(FailureReason reason) {
    return of(failures, reason).count();
  }

  public double takeovers(TakeoverOutcome outcome) {
    return of(takeovers, outcome).count();
  }

  /** Removes every meter (a stopped node must not keep reporting). */
  public void unregister() {
    for (Meter meter : meters) {
      registry.remove(meter);
    }
    meters.clear();
  }
}
