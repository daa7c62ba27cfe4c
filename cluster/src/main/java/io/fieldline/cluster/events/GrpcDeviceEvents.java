package io.fieldline.cluster.events;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.EventSendOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.events.EventStream.Receipt;
import io.fieldline.cluster.internal.proto.DeviceEventsGrpc;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.grpc.BindableService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@link DeviceEvents}: an event published on this node reaches the listeners of its
 * device here and on every other member, because the device's session may be on any node (after a
 * takeover, a device is often connected to a node that does not own it).
 *
 * <p>{@link #publish} sends the event on this node's ordered stream to each other member ({@link
 * EventStream}, one per peer), hands it to this node's listeners on the caller's thread, and
 * completes with the sum of this node's count and every member's answer once each member answered,
 * failed or ran past {@code event-timeout}. It never fails: a member that cannot be reached counts
 * as none. Each receiver hands the event to its own listeners only ({@link EventService}).
 *
 * <p>Server-side RPC: a {@link DeviceEvent.RpcRequested} carries its caller's callback, which
 * cannot travel. Before the event leaves, the callback is registered in this node's {@link
 * RpcCalls} under a call id that goes with the event; a session on another node that takes it
 * reports each step back on that node's stream to this one, and the real callback hears them in the
 * order the session made them. Beyond {@code max-pending-rpc-calls} waiting callers, an RPC is
 * offered to this node's listeners only. If the caller's node dies, the reports are dropped: its
 * caller is gone with it. If the session's node dies, the caller hears nothing more and its RPC
 * times out (the RPC service's defined answer).
 *
 * <p>Thread-safe; {@link #publish} never blocks (it runs on REST threads and session event loops).
 */
public final class GrpcDeviceEvents implements DeviceEvents, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(GrpcDeviceEvents.class);

  private final String selfId;
  private final Supplier<Map<String, Member>> members;
  private final PeerChannels channels;
  private final LocalDeviceEvents local;
  private final Duration timeout;
  private final int maxInflightPerPeer;
  private final ScheduledExecutorService timer;
  private final ClusterMetrics metrics;
  private final RpcCalls calls;
  private final LogThrottle warnings = new LogThrottle();
  // Put before every throttled line; node ids are validated to a safe alphabet (no {}).
  private final String warnPrefix;
  private final Map<String, EventStream> streams = new ConcurrentHashMap<>();
  private volatile boolean open = true;

  /**
   * @param members the current members by node id (this node among them or not)
   * @param local this node's listeners; the transport subscribes its sessions there or here
   * @param timeout deadline of one event or progress report ({@code event-timeout})
   * @param maxInflightPerPeer events unanswered on one peer's stream, and separately progress
   *     reports; more are dropped
   * @param maxPendingCalls RPC callers here waiting for reports ({@code max-pending-rpc-calls})
   * @param timer runs the deadlines
   */
  public GrpcDeviceEvents(
      String selfId,
      Supplier<Map<String, Member>> members,
      PeerChannels channels,
      LocalDeviceEvents local,
      Duration timeout,
      int maxInflightPerPeer,
      int maxPendingCalls,
      ScheduledExecutorService timer,
      ClusterMetrics metrics) {
    this.selfId = selfId;
    this.members = members;
    this.channels = channels;
    this.local = local;
    this.timeout = timeout;
    this.maxInflightPerPeer = maxInflightPerPeer;
    this.timer = timer;
    this.metrics = metrics;
    this.calls = new RpcCalls(selfId, maxPendingCalls, timeout, timer, metrics);
    this.warnPrefix = "[events|" + selfId + "] ";
  }

  @Override
  public CompletionStage<Integer> publish(DeviceEvent event) {
    return publish(event, open ? peers() : List.of(), true);
  }

  @Override
  public CompletionStage<Integer> publishTo(Set<String> nodeIds, DeviceEvent event) {
    List<Member> peers = new ArrayList<>();
    if (open) {
      for (Member peer : peers()) {
        if (nodeIds.contains(peer.nodeId())) {
          peers.add(peer);
        }
      }
    }
    return publish(event, peers, nodeIds.contains(selfId));
  }

  private CompletionStage<Integer> publish(DeviceEvent event, List<Member> peers, boolean here) {
    long callId = 0; // only an RPC has one
    if (!peers.isEmpty() && event instanceof DeviceEvent.RpcRequested requested) {
      OptionalLong registered = calls.register(requested);
      if (registered.isPresent()) {
        callId = registered.getAsLong();
      } else {
        warnings.warnElseDebug(
            LOG,
            warnPrefix
                + "RPC {} of device {} offered here only: {} callers already wait for other nodes",
            requested.rpc().id(),
            event.deviceId(),
            calls.pending());
        peers = List.of();
      }
    }
    List<CompletableFuture<Receipt>> answers = new ArrayList<>(peers.size());
    if (!peers.isEmpty()) {
      Event message = EventCodec.event(event, selfId, callId);
      for (Member peer : peers) {
        answers.add(
            sendTo(peer, stream -> stream.send(message))
                .thenApply(receipt -> sent(event, peer, receipt)));
      }
    }
    int tookHere = here ? local.deliver(event) : 0;
    if (answers.isEmpty()) {
      return CompletableFuture.completedFuture(tookHere);
    }
    long id = callId;
    return CompletableFuture.allOf(answers.toArray(CompletableFuture<?>[]::new))
        .thenApply(
            all -> {
              int taken = 0;
              boolean everyPeerAnswered = true;
              for (CompletableFuture<Receipt> answer : answers) {
                Receipt receipt = answer.join();
                taken += receipt.taken();
                everyPeerAnswered &= receipt.outcome() == EventSendOutcome.ANSWERED;
              }
              if (event instanceof DeviceEvent.RpcRequested) {
                calls.peersAnswered(id, taken, everyPeerAnswered);
              }
              return tookHere + taken;
            });
  }

  private List<Member> peers() {
    List<Member> peers = new ArrayList<>();
    for (Member member : members.get().values()) {
      if (!member.nodeId().equals(selfId)) {
        peers.add(member);
      }
    }
    return peers;
  }

  private Receipt sent(DeviceEvent event, Member peer, Receipt receipt) {
    metrics.eventSent(receipt.outcome());
    if (receipt.outcome() != EventSendOutcome.ANSWERED) {
      warnings.warnElseDebug(
          LOG,
          warnPrefix + "{} of device {} not handed to {} ({}): counted as no listener there",
          event.getClass().getSimpleName(),
          event.deviceId(),
          peer.nodeId(),
          receipt.outcome());
    }
    return receipt;
  }

  @Override
  public Subscription subscribe(DeviceId device, DeviceEventListener listener) {
    return local.subscribe(device, listener);
  }

  /** The gRPC service that receives the other nodes' events and reports. */
  public BindableService service() {
    return new EventService(selfId, local, calls, this::remoteCallback, metrics);
  }

  private RemoteRpcCallback remoteCallback(String originNodeId, long callId, ToDeviceRpc rpc) {
    return new RemoteRpcCallback(originNodeId, callId, rpc, this::sendProgress);
  }

  private void sendProgress(String originNodeId, RpcProgress report) {
    Member origin = open ? members.get().get(originNodeId) : null;
    if (origin == null) {
      metrics.progressSent(EventSendOutcome.DROPPED);
      warnings.warnElseDebug(
          LOG,
          warnPrefix + "progress of RPC call {} dropped: its caller's node {} is not a member",
          report.getCallId(),
          originNodeId);
      return;
    }
    sendTo(origin, stream -> stream.send(report))
        .thenAccept(
            receipt -> {
              metrics.progressSent(receipt.outcome());
              if (receipt.outcome() != EventSendOutcome.ANSWERED) {
                warnings.warnElseDebug(
                    LOG,
                    warnPrefix
                        + "progress of RPC call {} not reported to {} ({}): its caller will time"
                        + " out",
                    report.getCallId(),
                    originNodeId,
                    receipt.outcome());
              }
            });
  }

  private CompletableFuture<Receipt> sendTo(
      Member peer, Function<EventStream, CompletableFuture<Receipt>> send) {
    try {
      return send.apply(stream(peer));
    } catch (IllegalStateException e) {
      // The peer channels are closed: this node is stopping.
      return CompletableFuture.completedFuture(Receipt.FAILED);
    }
  }

  private EventStream stream(Member peer) {
    return streams.compute(
        peer.nodeId(),
        (id, existing) -> {
          if (existing != null && existing.peer().grpc().equals(peer.grpc())) {
            return existing;
          }
          if (existing != null) {
            existing.close();
          }
          return new EventStream(
              selfId,
              peer,
              DeviceEventsGrpc.newStub(channels.channel(peer)),
              timeout,
              maxInflightPerPeer,
              timer,
              metrics);
        });
  }

  /** Closes the streams to every peer not in {@code nodeIds}. */
  public void retainOnly(Collection<String> nodeIds) {
    Set<String> keep = new HashSet<>(nodeIds);
    streams
        .entrySet()
        .removeIf(
            entry -> {
              if (keep.contains(entry.getKey())) {
                return false;
              }
              entry.getValue().close();
              return true;
            });
  }

  /** RPC callers here that other nodes may still report to (tests, diagnostics). */
  public int pendingCalls() {
    return calls.pending();
  }

  /** Messages unanswered on the stream to {@code nodeId} (tests, diagnostics). */
  public int inflight(String nodeId) {
    EventStream stream = streams.get(nodeId);
    return stream == null ? 0 : stream.inflight();
  }

  /**
   * Stops sending: later events reach this node's listeners only, and reports are dropped. The
   * waiting callers are forgotten (their RPCs time out).
   */
  @Override
  public void close() {
    open = false;
    streams.values().forEach(EventStream::close);
    streams.clear();
    calls.clear();
  }
}
