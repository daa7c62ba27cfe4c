package io.fieldline.cluster.events;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.EventSendOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceEventsGrpc;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.EventEnvelope;
import io.fieldline.cluster.internal.proto.EventEnvelopeOrBuilder;
import io.fieldline.cluster.internal.proto.EventReceipt;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
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
 * <p>Bounds and deadlines: at most {@code maxInflight} device events, and separately at most {@code
 * maxInflight} progress reports and {@code maxInflight} stored-telemetry events (live data), are
 * unanswered; one more is not sent and ends at once as {@code DROPPED}. Each kind has its own
 * allowance so that a burst of one (shared attribute pushes, a busy watched device) cannot crowd
 * out another (the answer to an RPC). A message is written at once: gRPC buffers what the
 * connection cannot take yet, which the bounds keep to {@code 3 * maxInflight} small messages
 * (unlike {@code forward.PeerStream}, whose telemetry batches wait for {@code isReady()}). Each
 * message has its own deadline ({@code event-timeout}); without a receipt by then it ends as {@code
 * TIMEOUT}. The call itself has no deadline: it lives as long as the peer, and HTTP/2 keep-alive
 * notices a dead one.
 *
 * <p>Failure: when the call fails or the peer ends it, the peer may or may not have handled the
 * messages on it. Events end as {@code FAILED}: sent again, one could reach a session twice.
 * Progress reports are sent once more, on a new call, in their order and before any later message
 * (a device's answer must not be lost to a connection reset; the peer's callers ignore a duplicate
 * step), with a new deadline; a report whose second call breaks too ends as {@code FAILED}. The
 * next message opens a new call if none did. A message ends once: the pending map decides who
 * completes it.
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
  private int events; // device events unanswered
  private int reports; // progress reports unanswered
  private int data; // stored-telemetry events unanswered
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
      if (allowanceUsed(envelope) >= maxInflight) {
        return CompletableFuture.completedFuture(Receipt.DROPPED);
      }
      pending = write(envelope, false, new CompletableFuture<>());
    }
    if (pending == null) {
      return CompletableFuture.completedFuture(Receipt.FAILED);
    }
    startDeadline(pending);
    return pending.future;
  }

  /**
   * Writes a message on the current call, opening one if there is none; under the lock.
   *
   * @return null if it did not leave
   */
  private @Nullable Pending write(
      EventEnvelope.Builder envelope, boolean resent, CompletableFuture<Receipt> future) {
    Call current = call;
    if (current == null) {
      current = new Call();
      call = current;
      stub.exchange(current); // calls beforeStart(), which sets current.requests
    }
    if (current.broken) {
      // With a direct executor a call to a dead channel fails inside stub.exchange().
      return null;
    }
    EventEnvelope message = envelope.setSeq(nextSeq++).build();
    Pending pending = new Pending(current, message, resent, future);
    current.pending.put(message.getSeq(), pending);
    count(pending, 1);
    try {
      current.requests().onNext(message);
    } catch (RuntimeException e) {
      // The call ended in between (its onError is on its way): this message did not leave.
      if (current.pending.remove(message.getSeq()) != null) {
        count(pending, -1);
      }
      LOG.debug("{} not sent: {}", logPrefix, e.toString());
      return null;
    }
    return pending;
  }

  /** Unanswered messages of the same kind as {@code envelope}; under the lock. */
  private int allowanceUsed(EventEnvelopeOrBuilder envelope) {
    if (envelope.hasProgress()) {
      return reports;
    }
    return envelope.getEvent().hasTelemetryStored() ? data : events;
  }

  /** Counts a message in or out of its kind's allowance; under the lock. */
  private void count(Pending pending, int delta) {
    if (pending.message.hasProgress()) {
      reports += delta;
    } else if (pending.message.getEvent().hasTelemetryStored()) {
      data += delta;
    } else {
      events += delta;
    }
    metrics.eventsInflight(delta);
  }

  private void startDeadline(Pending pending) {
    try {
      pending.deadline =
          timer.schedule(() -> expire(pending), timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      expire(pending); // shutting down
    }
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
      return events + reports + data;
    }
  }

  private void expire(Pending pending) {
    if (remove(pending.call, pending.message.getSeq()) != null) {
      pending.end(Receipt.TIMEOUT);
    }
  }

  private @Nullable Pending remove(Call from, long seq) {
    synchronized (lock) {
      Pending pending = from.pending.remove(seq);
      if (pending != null) {
        count(pending, -1);
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
    List<Pending> unanswered;
    List<Pending> failed = new ArrayList<>();
    List<Pending> resent = new ArrayList<>();
    synchronized (lock) {
      from.broken = true;
      unanswered = new ArrayList<>(from.pending.values());
      unanswered.sort(Comparator.comparingLong(pending -> pending.message.getSeq()));
      from.pending.clear();
      unanswered.forEach(pending -> count(pending, -1));
      if (call == from) {
        call = null; // the next message opens a new call
      }
      // Under the lock, so no later message overtakes them.
      for (Pending pending : unanswered) {
        boolean resend = !closed && !pending.resent && pending.message.hasProgress();
        Pending again = resend ? write(pending.message.toBuilder(), true, pending.future) : null;
        if (again == null) {
          failed.add(pending);
        } else {
          resent.add(again);
        }
      }
    }
    LOG.debug(
        "{} stream ended ({}); {} message(s) unanswered, {} report(s) sent again",
        logPrefix,
        why,
        unanswered.size(),
        resent.size());
    for (Pending pending : unanswered) {
      pending.cancelDeadline();
    }
    resent.forEach(this::startDeadline);
    for (Pending pending : failed) {
      pending.end(Receipt.FAILED);
    }
  }

  /** One message sent and not yet answered. */
  private static final class Pending {
    final Call call;
    final EventEnvelope message;
    final boolean resent; // a progress report sent once more, after its first call broke
    final CompletableFuture<Receipt> future; // a report sent again keeps its first sending's
    volatile @Nullable ScheduledFuture<?> deadline;

    Pending(Call call, EventEnvelope message, boolean resent, CompletableFuture<Receipt> future) {
      this.call = call;
      this.message = message;
      this.resent = resent;
      this.future = future;
    }

    void cancelDeadline() {
      ScheduledFuture<?> scheduled = deadline;
      if (scheduled != null) {
        scheduled.cancel(false);
      }
    }

    void end(Receipt receipt) {
      cancelDeadline();
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
