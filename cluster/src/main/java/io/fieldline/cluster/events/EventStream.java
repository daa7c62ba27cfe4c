package io.fieldline.cluster.events;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.EventSendOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceEventsGrpc;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.EventEnvelope;
import io.fieldline.cluster.internal.proto.EventReceipt;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending end of the event stream to one peer: one bidirectional gRPC call ({@code
 * DeviceEvents.Exchange}) carries, in the order they were sent, every device event this node
 * publishes to that peer and every RPC progress report this node's sessions send to callers waiting
 * there. The peer handles them one at a time in arrival order, so the events of a device published
 * here reach its listeners there in the order they were published.
 *
 * <p>Bounds and deadlines: at most {@code maxInflight} messages are unanswered; one more is not
 * sent and ends at once as {@code DROPPED}. A message is written at once: gRPC buffers what the
 * connection cannot take yet, which the bound keeps to {@code maxInflight} small messages (unlike
 * {@code forward.PeerStream}, whose telemetry batches wait for {@code isReady()}). Each message has
 * its own deadline ({@code event-timeout}); without a receipt by then it ends as {@code TIMEOUT}.
 * The call itself has no deadline: it lives as long as the peer, and HTTP/2 keep-alive notices a
 * dead one.
 *
 * <p>Failure: when the call fails or the peer ends it, every message on it ends as {@code FAILED}
 * (the peer may or may not have handled it) and the next message opens a new call. A message ends
 * once: the pending map decides who completes it. Nothing is retried.
 *
 * <p>Thread-safe: {@link #send} runs on any thread (a REST thread, a session's event loop),
 * receipts on the gRPC executor, deadlines on the timer; the state is guarded by one lock, and
 * futures are completed outside it where the transport allows (with a direct executor, as
 * in-process tests use, gRPC may call back inside {@code onNext}).
 */
final class EventStream {

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

  private final Member peer;
  private final DeviceEventsGrpc.DeviceEventsStub stub;
  private final Duration timeout;
  private final int maxInflight;
  private final ScheduledExecutorService timer;
  private final ClusterMetrics metrics;
  private final String logPrefix;
  private final Object lock = new Object();
  private @Nullable Call call;
  private long nextSeq;
  private int inflight;
  private boolean closed;

  EventStream(
      String selfId,
      Member peer,
      DeviceEventsGrpc.DeviceEventsStub stub,
      Duration timeout,
      int maxInflight,
      ScheduledExecutorService timer,
      ClusterMetrics metrics) {
    this.peer = peer;
    this.stub = stub;
    this.timeout = timeout;
    this.maxInflight = maxInflight;
    this.timer = timer;
    this.metrics = metrics;
    this.logPrefix = "[events|" + selfId + "->" + peer.nodeId() + "]";
  }

  Member peer() {
    return peer;
  }

  /** Sends a device event; completes with the peer's count of listeners that took it. */
  CompletableFuture<Receipt> send(Event event) {
    return send(EventEnvelope.newBuilder().setEvent(event));
  }

  /** Sends an RPC progress report; completes with 1 taken if the peer still had the call. */
  CompletableFuture<Receipt> send(RpcProgress progress) {
    return send(EventEnvelope.newBuilder().setProgress(progress));
  }

  private CompletableFuture<Receipt> send(EventEnvelope.Builder envelope) {
    Pending pending;
    synchronized (lock) {
      if (closed) {
        return CompletableFuture.completedFuture(Receipt.FAILED);
      }
      if (inflight >= maxInflight) {
        return CompletableFuture.completedFuture(Receipt.DROPPED);
      }
      Call current = call;
      if (current == null) {
        current = new Call();
        call = current;
        stub.exchange(current); // calls beforeStart(), which sets current.requests
      }
      if (current.broken) {
        // With a direct executor a call to a dead channel fails inside stub.exchange().
        return CompletableFuture.completedFuture(Receipt.FAILED);
      }
      long seq = nextSeq++;
      pending = new Pending(current, seq);
      current.pending.put(seq, pending);
      inflight++;
      metrics.eventsInflight(1);
      try {
        current.requests().onNext(envelope.setSeq(seq).build());
      } catch (RuntimeException e) {
        // The call ended in between (its onError is on its way): this message did not leave.
        current.pending.remove(seq);
        inflight--;
        metrics.eventsInflight(-1);
        LOG.debug("{} not sent: {}", logPrefix, e.toString());
        return CompletableFuture.completedFuture(Receipt.FAILED);
      }
    }
    try {
      pending.deadline =
          timer.schedule(() -> expire(pending), timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      expire(pending); // shutting down
    }
    return pending.future;
  }

  /** Stops sending and half-closes the call; receipts still in flight may arrive. */
  void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      Call current = call;
      if (current != null && !current.broken) {
        try {
          current.requests().onCompleted();
        } catch (RuntimeException e) {
          LOG.debug("{} half-close failed: {}", logPrefix, e.toString());
        }
      }
    }
  }

  int inflight() {
    synchronized (lock) {
      return inflight;
    }
  }

  private void expire(Pending pending) {
    if (remove(pending.call, pending.seq) != null) {
      pending.end(Receipt.TIMEOUT);
    }
  }

  private @Nullable Pending remove(Call from, long seq) {
    synchronized (lock) {
      Pending pending = from.pending.remove(seq);
      if (pending != null) {
        inflight--;
        metrics.eventsInflight(-1);
      }
      return pending;
    }
  }

  private void onReceipt(Call from, EventReceipt receipt) {
    Pending pending = remove(from, receipt.getSeq());
    if (pending != null) {
      pending.end(new Receipt(EventSendOutcome.ANSWERED, receipt.getTaken()));
    }
  }

  private void onBroken(Call from, String why) {
    List<Pending> failed;
    synchronized (lock) {
      from.broken = true;
      failed = new ArrayList<>(from.pending.values());
      from.pending.clear();
      inflight -= failed.size();
      metrics.eventsInflight(-failed.size());
      if (call == from) {
        call = null; // the next message opens a new call
      }
    }
    LOG.debug("{} stream ended ({}); {} message(s) unanswered", logPrefix, why, failed.size());
    for (Pending pending : failed) {
      pending.end(Receipt.FAILED);
    }
  }

  /** One message sent and not yet answered. */
  private static final class Pending {
    final Call call;
    final long seq;
    final CompletableFuture<Receipt> future = new CompletableFuture<>();
    volatile @Nullable ScheduledFuture<?> deadline;

    Pending(Call call, long seq) {
      this.call = call;
      this.seq = seq;
    }

    void end(Receipt receipt) {
      ScheduledFuture<?> scheduled = deadline;
      if (scheduled != null) {
        scheduled.cancel(false);
      }
      future.complete(receipt);
    }
  }

  /** One gRPC call; replaced by a new one when it breaks. */
  private final class Call implements ClientResponseObserver<EventEnvelope, EventReceipt> {
    final Map<Long, Pending> pending = new HashMap<>();
    boolean broken;
    private @Nullable ClientCallStreamObserver<EventEnvelope> requests;

    ClientCallStreamObserver<EventEnvelope> requests() {
      ClientCallStreamObserver<EventEnvelope> observer = requests;
      if (observer == null) {
        throw new IllegalStateException("call not started");
      }
      return observer;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<EventEnvelope> requestStream) {
      requests = requestStream;
    }

    @Override
    public void onNext(EventReceipt receipt) {
      onReceipt(this, receipt);
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
      onBroken(this, "the peer ended the stream");
    }
  }
}
