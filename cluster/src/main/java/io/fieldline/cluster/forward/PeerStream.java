package io.fieldline.cluster.forward;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.FailureReason;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceForwardingGrpc;
import io.fieldline.cluster.internal.proto.ForwardReply;
import io.fieldline.cluster.internal.proto.ForwardRequest;
import io.fieldline.common.Ack;
import io.fieldline.common.DeviceMessage;
import io.fieldline.common.PressureGauge;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending end of the forwarding stream to one peer: one bidirectional gRPC call carries every
 * message this node forwards to that peer, in submission order (so a device's messages reach its
 * owner in the order its session submitted them).
 *
 * <p>Bounds and deadlines: at most {@code maxInflight} messages are in flight (sent or waiting for
 * the stream to be ready, not yet answered); one more is rejected at once as {@code OVERLOADED}. A
 * message goes on the wire only while the call {@code isReady()} (the owner grants requests with
 * {@code request(n)}); the others wait in order and are sent from the {@code onReady} callback.
 * Each message has its own deadline ({@code forward-timeout}): without an answer by then it is
 * rejected. The call itself has no gRPC deadline: it lives as long as the peer, and HTTP/2
 * keep-alive notices a dead peer.
 *
 * <p>Failure: when the call fails or the owner ends it, every message on it is rejected as {@code
 * UNAVAILABLE} (the device gets no PUBACK and retransmits) and the next message opens a new call. A
 * message is never answered twice: the pending map decides who completes it.
 *
 * <p>Pressure: while at least three quarters of {@code maxInflight} are in flight, this stream
 * counts one on the shared gauge, until it is back at half.
 *
 * <p>Thread-safe: {@link #send} runs on Netty event loops, replies on the gRPC executor, deadlines
 * on the timer; all state is guarded by one lock, and futures are completed outside it.
 */
final class PeerStream {

  private static final Logger LOG = LoggerFactory.getLogger(PeerStream.class);
  private static final long BREAK_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final Member peer;
  private final DeviceForwardingGrpc.DeviceForwardingStub stub;
  private final Duration timeout;
  private final int maxInflight;
  private final int highWater;
  private final int lowWater;
  private final ScheduledExecutorService timer;
  private final ClusterMetrics metrics;
  private final PressureGauge pressure;
  private final String logPrefix;
  private final Object lock = new Object();
  private @Nullable Call call;
  private @Nullable Call closing;
  private long nextSeq;
  private int inflight;
  private boolean saturated;
  private boolean closed;
  private long lastBreakLogNanos = System.nanoTime() - BREAK_LOG_INTERVAL_NANOS;

  PeerStream(
      String selfId,
      Member peer,
      DeviceForwardingGrpc.DeviceForwardingStub stub,
      Duration timeout,
      int maxInflight,
      ScheduledExecutorService timer,
      ClusterMetrics metrics,
      PressureGauge pressure) {
    this.peer = peer;
    this.stub = stub;
    this.timeout = timeout;
    this.maxInflight = maxInflight;
    this.highWater = Math.max(1, maxInflight * 3 / 4);
    this.lowWater = Math.max(0, Math.min(highWater - 1, maxInflight / 2));
    this.timer = timer;
    this.metrics = metrics;
    this.pressure = pressure;
    this.logPrefix = "[forward|" + selfId + "->" + peer.nodeId() + "]";
  }

  Member peer() {
    return peer;
  }

  /** Forwards one message; the stage completes with the owner's answer or a rejection. */
  CompletionStage<Ack> send(DeviceMessage message) {
    Pending pending;
    int pressureDelta;
    synchronized (lock) {
      if (closed) {
        metrics.forwardRefused(FailureReason.NO_OWNER);
        return CompletableFuture.completedFuture(
            Ack.rejected(Ack.Reason.UNAVAILABLE, "owner " + peer.nodeId() + " left the cluster"));
      }
      if (inflight >= maxInflight) {
        metrics.forwardRefused(FailureReason.OVERLOADED);
        return CompletableFuture.completedFuture(
            Ack.rejected(
                Ack.Reason.OVERLOADED,
                maxInflight + " messages already in flight to " + peer.nodeId()));
      }
      Call current = call;
      if (current == null) {
        current = new Call();
        call = current;
        stub.forward(current); // calls beforeStart(), which sets current.requests
      }
      if (current.broken) {
        // With a direct executor a call to a dead channel fails inside stub.forward().
        metrics.forwardRefused(FailureReason.STREAM_BROKEN);
        return CompletableFuture.completedFuture(
            Ack.rejected(Ack.Reason.UNAVAILABLE, "no stream to owner " + peer.nodeId()));
      }
      long seq = nextSeq++;
      pending = new Pending(current, seq, MessageCodec.request(seq, message));
      current.pending.put(seq, pending);
      inflight++;
      pressureDelta = updateSaturation();
      metrics.forwardStarted();
      ClientCallStreamObserver<ForwardRequest> requests = current.requests();
      if (current.unsent.isEmpty() && requests.isReady()) {
        requests.onNext(pending.request);
      } else {
        current.unsent.add(pending);
      }
    }
    applyPressure(pressureDelta);
    try {
      pending.deadline =
          timer.schedule(() -> expire(pending), timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      expire(pending); // shutting down
    }
    return pending.future;
  }

  /** Stops taking messages and half-closes the call; answers still in flight may arrive. */
  void close() {
    List<Pending> unsent;
    int pressureDelta;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      Call current = call;
      call = null;
      if (current == null) {
        return;
      }
      closing = current;
      unsent = new ArrayList<>(current.unsent);
      current.unsent.clear();
      for (Pending pending : unsent) {
        current.pending.remove(pending.seq);
      }
      inflight -= unsent.size();
      pressureDelta = updateSaturation();
      try {
        current.requests().onCompleted();
      } catch (RuntimeException e) {
        LOG.debug("{} half-close failed: {}", logPrefix, e.toString());
      }
    }
    applyPressure(pressureDelta);
    for (Pending pending : unsent) {
      pending.fail(FailureReason.NO_OWNER, "owner " + peer.nodeId() + " left the cluster");
    }
  }

  /** Futures of every message not yet answered (for a graceful shutdown). */
  List<CompletableFuture<Ack>> inFlight() {
    synchronized (lock) {
      List<CompletableFuture<Ack>> futures = new ArrayList<>();
      for (Call c : new Call[] {call, closing}) {
        if (c != null) {
          c.pending.values().forEach(p -> futures.add(p.future));
        }
      }
      return futures;
    }
  }

  int inflight() {
    synchronized (lock) {
      return inflight;
    }
  }

  private void expire(Pending pending) {
    int pressureDelta;
    synchronized (lock) {
      if (pending.call.pending.remove(pending.seq) == null) {
        return; // answered meanwhile
      }
      inflight--;
      pressureDelta = updateSaturation();
    }
    applyPressure(pressureDelta);
    pending.fail(
        FailureReason.TIMEOUT,
        "no answer from owner " + peer.nodeId() + " within " + timeout.toMillis() + " ms");
  }

  private void onReply(Call from, ForwardReply reply) {
    Pending pending;
    int pressureDelta;
    synchronized (lock) {
      pending = from.pending.remove(reply.getSeq());
      if (pending == null) {
        return; // timed out already
      }
      inflight--;
      pressureDelta = updateSaturation();
    }
    applyPressure(pressureDelta);
    pending.finish(MessageCodec.ack(reply));
  }

  private void onBroken(Call from, String why) {
    List<Pending> failed;
    int pressureDelta;
    boolean logNow;
    synchronized (lock) {
      from.broken = true;
      failed = new ArrayList<>(from.pending.values());
      from.pending.clear();
      from.unsent.clear();
      inflight -= failed.size();
      if (call == from) {
        call = null; // the next message opens a new call
      }
      pressureDelta = updateSaturation();
      long now = System.nanoTime();
      logNow = !failed.isEmpty() && now - lastBreakLogNanos >= BREAK_LOG_INTERVAL_NANOS;
      if (logNow) {
        lastBreakLogNanos = now;
      }
    }
    applyPressure(pressureDelta);
    String detail = "stream to owner " + peer.nodeId() + " broke: " + why;
    if (logNow) {
      LOG.warn(
          "{} {}; {} message(s) not acknowledged, devices will retransmit",
          logPrefix,
          detail,
          failed.size());
    } else {
      LOG.debug("{} {} ({} in flight)", logPrefix, detail, failed.size());
    }
    for (Pending pending : failed) {
      pending.fail(FailureReason.STREAM_BROKEN, detail);
    }
  }

  private void drain(Call from) {
    synchronized (lock) {
      ClientCallStreamObserver<ForwardRequest> requests = from.requests();
      while (!from.broken && !from.unsent.isEmpty() && requests.isReady()) {
        Pending next = from.unsent.poll();
        if (from.pending.containsKey(next.seq)) {
          requests.onNext(next.request);
        }
      }
    }
  }

  /** Under the lock: the change (+1, -1, 0) this stream makes to the shared gauge. */
  private int updateSaturation() {
    if (!saturated && inflight >= highWater) {
      saturated = true;
      return 1;
    }
    if (saturated && inflight <= lowWater) {
      saturated = false;
      return -1;
    }
    return 0;
  }

  // Outside the lock: the gauge's listeners (the transport pausing sockets) run on this thread.
  private void applyPressure(int delta) {
    if (delta > 0) {
      pressure.increment();
    } else if (delta < 0) {
      pressure.decrement();
    }
  }

  /** One forwarded message. */
  private final class Pending {
    final Call call;
    final long seq;
    final ForwardRequest request;
    final long startNanos = System.nanoTime();
    final CompletableFuture<Ack> future = new CompletableFuture<>();
    volatile @Nullable ScheduledFuture<?> deadline;

    Pending(Call call, long seq, ForwardRequest request) {
      this.call = call;
      this.seq = seq;
      this.request = request;
    }

    void finish(Ack ack) {
      cancelDeadline();
      if (ack.isStored()) {
        metrics.forwardStored(startNanos);
      } else {
        metrics.forwardFailed(FailureReason.OWNER_REJECTED);
      }
      future.complete(ack);
    }

    void fail(FailureReason reason, String detail) {
      cancelDeadline();
      metrics.forwardFailed(reason);
      future.complete(Ack.rejected(Ack.Reason.UNAVAILABLE, detail));
    }

    private void cancelDeadline() {
      ScheduledFuture<?> scheduled = deadline;
      if (scheduled != null) {
        scheduled.cancel(false);
      }
    }
  }

  /** One gRPC call; replaced by a new one when it breaks. */
  private final class Call implements ClientResponseObserver<ForwardRequest, ForwardReply> {
    final Map<Long, Pending> pending = new HashMap<>();
    final ArrayDeque<Pending> unsent = new ArrayDeque<>();
    boolean broken;
    private @Nullable ClientCallStreamObserver<ForwardRequest> requests;

    ClientCallStreamObserver<ForwardRequest> requests() {
      ClientCallStreamObserver<ForwardRequest> observer = requests;
      if (observer == null) {
        throw new IllegalStateException("call not started");
      }
      return observer;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<ForwardRequest> requestStream) {
      requests = requestStream;
      requestStream.setOnReadyHandler(() -> drain(this));
    }

    @Override
    public void onNext(ForwardReply reply) {
      onReply(this, reply);
    }

    @Override
    public void onError(Throwable error) {
      Status status = Status.fromThrowable(error);
      onBroken(
          this,
          status.getCode()
              + (status.getDescription() == null ? "" : " " + status.getDescription()));
    }

    @Override
    public void onCompleted() {
      onBroken(this, "the owner ended the stream");
    }
  }
}
