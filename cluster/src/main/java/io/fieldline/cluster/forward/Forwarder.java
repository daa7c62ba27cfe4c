package io.fieldline.cluster.forward;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.FailureReason;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceForwardingGrpc;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.port.PressureGauge;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Forwards device messages to their owner: one {@link ForwardStream} per peer node, created on
 * first use, closed when the peer leaves the ring or re-registers at another address. Thread-safe.
 */
public final class Forwarder implements AutoCloseable {

  private final String selfId;
  private final PeerChannels channels;
  private final Duration timeout;
  private final int maxInflightPerPeer;
  private final ScheduledExecutorService timer;
  private final ClusterMetrics metrics;
  private final PressureGauge pressure;
  private final Map<String, ForwardStream> streams = new ConcurrentHashMap<>();
  private volatile boolean accepting = true;

  /**
   * @param timeout deadline of each message
   * @param maxInflightPerPeer bound of messages in flight to one peer
   * @param timer runs the deadlines
   * @param pressure counts saturated peers; the transport pauses reading while it is overloaded
   */
  public Forwarder(
      String selfId,
      PeerChannels channels,
      Duration timeout,
      int maxInflightPerPeer,
      ScheduledExecutorService timer,
      ClusterMetrics metrics,
      PressureGauge pressure) {
    this.selfId = selfId;
    this.channels = channels;
    this.timeout = timeout;
    this.maxInflightPerPeer = maxInflightPerPeer;
    this.timer = timer;
    this.metrics = metrics;
    this.pressure = pressure;
  }

  /** Sends {@code message} to {@code owner}; the stage completes with its answer or a rejection. */
  public CompletionStage<Ack> forward(Member owner, DeviceMessage message) {
    if (!accepting) {
      metrics.forwardRefused(FailureReason.NO_OWNER);
      return CompletableFuture.completedFuture(
          Ack.rejected(Ack.Reason.UNAVAILABLE, "node " + selfId + " is shutting down"));
    }
    ForwardStream stream =
        streams.compute(
            owner.nodeId(),
            (id, existing) -> {
              if (existing != null && existing.peer().grpc().equals(owner.grpc())) {
                return existing;
              }
              if (existing != null) {
                existing.close();
              }
              return new ForwardStream(
                  selfId,
                  owner,
                  // Replies are handled on the channel's event loop, as the owner handles
                  // requests (ForwardingService.DIRECT).
                  DeviceForwardingGrpc.newStub(channels.channel(owner))
                      .withExecutor(ForwardingService.DIRECT),
                  timeout,
                  maxInflightPerPeer,
                  timer,
                  metrics,
                  pressure);
            });
    return stream.send(message);
  }

  /** Closes the streams to every peer not in {@code nodeIds}. */
  public void retainOnly(Collection<String> nodeIds) {
    Set<String> keep = new HashSet<>(nodeIds);
    for (String id : Set.copyOf(streams.keySet())) {
      if (!keep.contains(id)) {
        ForwardStream removed = streams.remove(id);
        if (removed != null) {
          removed.close();
        }
      }
    }
  }

  /** Messages in flight to {@code nodeId} (tests, diagnostics). */
  public int inflight(String nodeId) {
    ForwardStream stream = streams.get(nodeId);
    return stream == null ? 0 : stream.inflight();
  }

  /**
   * Stops forwarding (new messages are rejected as {@code UNAVAILABLE}) and returns a stage that
   * completes once every message already forwarded has its answer or hit its deadline.
   */
  public CompletionStage<Void> shutdown() {
    accepting = false;
    List<CompletableFuture<Ack>> inFlight = new ArrayList<>();
    for (ForwardStream stream : streams.values()) {
      inFlight.addAll(stream.inFlight());
    }
    return CompletableFuture.allOf(inFlight.toArray(CompletableFuture<?>[]::new));
  }

  /** Closes every stream (answers still in flight are rejected when the channels close). */
  @Override
  public void close() {
    accepting = false;
    for (ForwardStream stream : streams.values()) {
      stream.close();
    }
    streams.clear();
  }
}
