package io.fieldline.cluster.events;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.EventSendOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceEventsGrpc;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.EventEnvelope;
import io.fieldline.cluster.internal.proto.EventReceipt;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.fieldline.cluster.peer.PeerStream;
import io.fieldline.cluster.peer.PeerStream.Bounds;
import io.fieldline.cluster.peer.PeerStream.Failure;
import io.fieldline.cluster.peer.PeerStream.Flow;
import io.fieldline.cluster.peer.PeerStream.Refusal;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event stream to one peer, on the cluster's {@link PeerStream}: one bidirectional gRPC call
 * ({@code DeviceEvents.Exchange}) carries, in the order they were sent, every device event this
 * node publishes to that peer and every RPC progress report this node's sessions send to callers
 * waiting there. The peer handles them one at a time in arrival order, so the events of a device
 * published here reach its listeners there in the order they were published.
 *
 * <p>Bounds and deadlines: at most {@code maxInflight} device events, and separately at most {@code
 * maxInflight} progress reports and {@code maxInflight} stored-telemetry events (live data), are
 * unanswered; one more is not sent and ends at once as {@code DROPPED}. Each kind has its own
 * allowance so that a burst of one (shared attribute pushes, a busy watched device) cannot crowd
 * out another (the answer to an RPC). A message is written at once ({@link Flow#AT_ONCE}): gRPC
 * buffers what the connection cannot take yet, which the bounds keep to {@code 3 * maxInflight}
 * small messages (unlike {@code forward.ForwardStream}, whose telemetry batches wait for {@code
 * isReady()}). Each message has its own deadline ({@code event-timeout}); without a receipt by then
 * it ends as {@code TIMEOUT}.
 *
 * <p>Failure: when the call fails or the peer ends it, the peer may or may not have handled the
 * messages on it. Events end as {@code FAILED}: sent again, one could reach a session twice.
 * Progress reports are sent once more, on a new call, in their order and before any later message
 * (a device's answer must not be lost to a connection reset; the peer's callers ignore a duplicate
 * step), with a new deadline; a report whose second call breaks too ends as {@code FAILED}.
 *
 * <p>Thread-safe: {@link #send} runs on any thread (a REST thread, a session's event loop),
 * receipts on the gRPC executor, deadlines on the timer; the stream's lock guards the state.
 */
final class EventStream implements PeerStream.Listener<EventReceipt, EventStream.Sent> {

  private static final Logger LOG = LoggerFactory.getLogger(EventStream.class);

  /**
   * How a message ended.
   *
   * @param taken from the peer's receipt; 0 unless {@code ANSWERED}
   */
  record Receipt(EventSendOutcome outcome, int taken) {
    static final Receipt DROPPED = new Receipt(EventSendOutcome.DROPPED, 0);
    static final Receipt FAILED = new Receipt(EventSendOutcome.FAILED, 0);
    static final Receipt TIMEOUT = new Receipt(EventSendOutcome.TIMEOUT, 0);
  }

  /** The kinds of message, each with its own allowance. */
  private enum Kind {
    /** Device events but stored telemetry. */
    EVENT,
    /** RPC progress reports. */
    REPORT,
    /** Stored-telemetry events (live data). */
    DATA
  }

  /** One message, as the sender keeps it. */
  record Sent(Kind kind, CompletableFuture<Receipt> future) {}

  private final Member peer;
  private final String logPrefix;
  private final ClusterMetrics metrics;
  private final PeerStream<EventEnvelope, EventReceipt, Sent> stream;

  EventStream(
      String selfId,
      Member peer,
      DeviceEventsGrpc.DeviceEventsStub stub,
      Duration timeout,
      int maxInflight,
      ScheduledExecutorService timer,
      ClusterMetrics metrics) {
    this.peer = peer;
    this.metrics = metrics;
    this.logPrefix = "[events|" + selfId + "->" + peer.nodeId() + "]";
    this.stream =
        new PeerStream<>(
            logPrefix,
            stub::exchange,
            EventReceipt::getSeq,
            new Bounds(Flow.AT_ONCE, Kind.values().length, maxInflight, timeout),
            timer,
            null,
            this);
  }

  Member peer() {
    return peer;
  }

  /** Sends a device event; completes with the peer's count of listeners that took it. */
  CompletableFuture<Receipt> send(Event event) {
    return send(
        event.hasTelemetryStored() ? Kind.DATA : Kind.EVENT,
        EventEnvelope.newBuilder().setEvent(event));
  }

  /** Sends an RPC progress report; completes with 1 taken if the peer still had the call. */
  CompletableFuture<Receipt> send(RpcProgress progress) {
    return send(Kind.REPORT, EventEnvelope.newBuilder().setProgress(progress));
  }

  private CompletableFuture<Receipt> send(Kind kind, EventEnvelope.Builder envelope) {
    Sent sent = new Sent(kind, new CompletableFuture<>());
    // The builder is used under the stream's lock only, once more if the message is sent again.
    Refusal refusal = stream.send(kind.ordinal(), sent, seq -> envelope.setSeq(seq).build());
    if (refusal == null) {
      return sent.future();
    }
    return CompletableFuture.completedFuture(
        refusal == Refusal.FULL ? Receipt.DROPPED : Receipt.FAILED);
  }

  /** Stops sending and half-closes the call; receipts still in flight may arrive. */
  void close() {
    stream.close();
  }

  int inflight() {
    return stream.inflight();
  }

  @Override
  public void counted(Sent message, int delta) {
    metrics.eventsInflight(delta);
  }

  @Override
  public boolean resendAfterBreak(Sent message) {
    return message.kind() == Kind.REPORT;
  }

  @Override
  public void answered(Sent message, EventReceipt receipt) {
    message.future().complete(new Receipt(EventSendOutcome.ANSWERED, receipt.getTaken()));
  }

  @Override
  public void failed(Sent message, Failure failure, String why) {
    message.future().complete(failure == Failure.TIMEOUT ? Receipt.TIMEOUT : Receipt.FAILED);
  }

  @Override
  public void broken(String why, int unanswered, int resent) {
    LOG.debug(
        "{} stream ended ({}); {} message(s) unanswered, {} report(s) sent again",
        logPrefix,
        why,
        unanswered,
        resent);
  }
}
