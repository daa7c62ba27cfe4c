package io.fieldline.cluster.forward;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.FailureReason;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceForwardingGrpc;
import io.fieldline.cluster.internal.proto.ForwardReply;
import io.fieldline.cluster.internal.proto.ForwardRequest;
import io.fieldline.cluster.peer.PeerStream;
import io.fieldline.cluster.peer.PeerStream.Bounds;
import io.fieldline.cluster.peer.PeerStream.Failure;
import io.fieldline.cluster.peer.PeerStream.Flow;
import io.fieldline.cluster.peer.PeerStream.Refusal;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.port.PressureGauge;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forwarding stream to one peer, on the cluster's {@link PeerStream}: one bidirectional gRPC
 * call carries every message this node forwards to that peer, in submission order (so a device's
 * messages reach its owner in the order its session submitted them).
 *
 * <p>Bounds and deadlines: at most {@code maxInflight} messages are in flight (sent or waiting for
 * the stream to be ready, not yet answered); one more is rejected at once as {@code OVERLOADED}. A
 * message goes on the wire only while the call {@code isReady()} (the owner grants requests with
 * {@code request(n)}); the others wait in order ({@link Flow#WAIT_FOR_READY}). Each message has its
 * own deadline ({@code forward-timeout}): without an answer by then it is rejected.
 *
 * <p>Failure: when the call fails or the owner ends it, every message on it is rejected as {@code
 * UNAVAILABLE} (the device gets no PUBACK and retransmits; nothing is sent twice) and the next
 * message opens a new call; a break is logged at WARN at most once per 10 s.
 *
 * <p>Pressure: while at least three quarters of {@code maxInflight} are in flight, this stream
 * counts one on the shared gauge, until it is back at half.
 *
 * <p>Thread-safe: {@link #send} runs on Netty event loops, replies on the gRPC channel's event loop
 * ({@link ForwardingService#DIRECT}), deadlines on the timer; the stream's lock guards the state,
 * and futures are completed outside it.
 */
final class ForwardStream implements PeerStream.Listener<ForwardReply, ForwardStream.Forwarded> {

  private static final Logger LOG = LoggerFactory.getLogger(ForwardStream.class);

  /** One forwarded message, as the sender keeps it. */
  record Forwarded(CompletableFuture<Ack> future, long startNanos) {}

  private final Member peer;
  private final String logPrefix;
  private final Duration timeout;
  private final int maxInflight;
  private final ClusterMetrics metrics;
  private final LogThrottle warnings = new LogThrottle();
  // Put before every throttled line; node ids are validated to a safe alphabet (no {}).
  private final String warnPrefix;
  private final PeerStream<ForwardRequest, ForwardReply, Forwarded> stream;

  ForwardStream(
      String selfId,
      Member peer,
      DeviceForwardingGrpc.DeviceForwardingStub stub,
      Duration timeout,
      int maxInflight,
      ScheduledExecutorService timer,
      ClusterMetrics metrics,
      PressureGauge pressure) {
    this.peer = peer;
    this.timeout = timeout;
    this.maxInflight = maxInflight;
    this.metrics = metrics;
    this.logPrefix = "[forward|" + selfId + "->" + peer.nodeId() + "]";
    this.warnPrefix = logPrefix + " ";
    this.stream =
        new PeerStream<>(
            logPrefix,
            stub::forward,
            ForwardReply::getSeq,
            new Bounds(Flow.WAIT_FOR_READY, 1, maxInflight, timeout),
            timer,
            pressure,
            this);
  }

  Member peer() {
    return peer;
  }

  /** Forwards one message; the stage completes with the owner's answer or a rejection. */
  CompletionStage<Ack> send(DeviceMessage message) {
    Forwarded forwarded = new Forwarded(new CompletableFuture<>(), System.nanoTime());
    Refusal refusal = stream.send(0, forwarded, seq -> MessageCodec.request(seq, message));
    if (refusal == null) {
      metrics.forwardStarted();
      return forwarded.future();
    }
    FailureReason reason =
        switch (refusal) {
          case CLOSED -> FailureReason.NO_OWNER;
          case FULL -> FailureReason.OVERLOADED;
          case NO_STREAM -> FailureReason.STREAM_BROKEN;
        };
    metrics.forwardRefused(reason);
    return CompletableFuture.completedFuture(
        switch (refusal) {
          case CLOSED ->
              Ack.rejected(Ack.Reason.UNAVAILABLE, "owner " + peer.nodeId() + " left the cluster");
          case FULL ->
              Ack.rejected(
                  Ack.Reason.OVERLOADED,
                  maxInflight + " messages already in flight to " + peer.nodeId());
          case NO_STREAM ->
              Ack.rejected(Ack.Reason.UNAVAILABLE, "no stream to owner " + peer.nodeId());
        });
  }

  /** Stops taking messages and half-closes the call; answers still in flight may arrive. */
  void close() {
    stream.close();
  }

  /** Futures of every message not yet answered (for a graceful shutdown). */
  List<CompletableFuture<Ack>> inFlight() {
    List<CompletableFuture<Ack>> futures = new ArrayList<>();
    stream.unanswered().forEach(forwarded -> futures.add(forwarded.future()));
    return futures;
  }

  int inflight() {
    return stream.inflight();
  }

  @Override
  public void counted(Forwarded message, int delta) {
    metrics.forwardInflight(delta);
  }

  @Override
  public boolean resendAfterBreak(Forwarded message) {
    return false; // the device retransmits what was not acknowledged
  }

  @Override
  public void answered(Forwarded message, ForwardReply reply) {
    Ack ack = MessageCodec.ack(reply);
    if (ack.isStored()) {
      metrics.forwardStored(message.startNanos());
    } else {
      metrics.forwardFailed(FailureReason.OWNER_REJECTED);
    }
    message.future().complete(ack);
  }

  @Override
  public void failed(Forwarded message, Failure failure, String why) {
    FailureReason reason =
        switch (failure) {
          case TIMEOUT -> FailureReason.TIMEOUT;
          case BROKEN -> FailureReason.STREAM_BROKEN;
          case CLOSED -> FailureReason.NO_OWNER;
        };
    String detail =
        switch (failure) {
          case TIMEOUT ->
              "no answer from owner " + peer.nodeId() + " within " + timeout.toMillis() + " ms";
          case BROKEN -> brokenDetail(why);
          case CLOSED -> "owner " + peer.nodeId() + " left the cluster";
        };
    metrics.forwardFailed(reason);
    message.future().complete(Ack.rejected(Ack.Reason.UNAVAILABLE, detail));
  }

  @Override
  public void broken(String why, int unanswered, int resent) {
    if (unanswered > 0) {
      warnings.warnElseDebug(
          LOG,
          warnPrefix + "{}; {} message(s) not acknowledged, devices will retransmit",
          brokenDetail(why),
          unanswered);
    } else {
      LOG.debug("{} {} (none in flight)", logPrefix, brokenDetail(why));
    }
  }

  private String brokenDetail(String why) {
    return "stream to owner " + peer.nodeId() + " broke: " + why;
  }
}
