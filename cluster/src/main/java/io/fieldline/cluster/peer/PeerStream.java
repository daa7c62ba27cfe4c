package io.fieldline.cluster.peer;

import io.fieldline.common.port.PressureGauge;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending end of one bidirectional gRPC stream to one peer, the client both cluster streams use
 * ({@code forward.ForwardStream}, {@code events.EventStream}): one call carries the messages in the
 * order they were sent, each with a sequence number that the peer's answer repeats, and each
 * message ends exactly once — answered, past its deadline, or failed with its call (the pending map
 * decides who completes it). What a message and its answer mean, what a failure is called and what
 * is logged is the {@link Listener}'s.
 *
 * <p>Bounds and deadlines: messages belong to one of {@code kinds} kinds, each with its own
 * allowance of {@code maxInflightPerKind} unanswered messages; one more is refused at once ({@link
 * Refusal#FULL}). With {@link Flow#WAIT_FOR_READY} a message goes on the wire only while the call
 * {@code isReady()} (the peer grants requests with {@code request(n)}), the others wait in order
 * and are sent from the {@code onReady} callback; with {@link Flow#AT_ONCE} it is written at once
 * and gRPC buffers what the connection cannot take yet (the allowances bound it). Each message has
 * its own deadline; without an answer by then it fails as {@link Failure#TIMEOUT}. The call itself
 * has no deadline: it lives as long as the peer, and HTTP/2 keep-alive notices a dead one.
 *
 * <p>Failure: when the call fails or the peer ends it, the peer may or may not have handled the
 * messages on it. Each unanswered message, in its order, is either sent once more on a new call,
 * before any later message, if the listener asks for it ({@link Listener#resendAfterBreak}; a
 * message is sent again at most once), or fails as {@link Failure#BROKEN}. The next message opens a
 * new call if none did. {@link #close} fails the messages still waiting to be sent as {@link
 * Failure#CLOSED} and half-closes the call; answers in flight may still arrive.
 *
 * <p>Pressure: with a gauge, while at least three quarters of {@code maxInflightPerKind} are
 * unanswered, this stream counts one on it, until it is back at half.
 *
 * <p>Thread-safe: {@link #send} runs on any thread (a session's event loop, a REST thread), answers
 * on the gRPC executor, deadlines on the timer; the state is guarded by one lock, and the listener
 * is told of an end outside it (with a direct executor, as in-process tests use, gRPC may call back
 * inside {@code onNext}, that is under the lock of the sending thread).
 *
 * @param <Q> the messages sent
 * @param <A> the peer's answers
 * @param <H> what the sender keeps of one message (its future, its start time)
 */
public final class PeerStream<Q, A, H> {

  private static final Logger LOG = LoggerFactory.getLogger(PeerStream.class);

  /** Why {@link #send} did not take a message. */
  public enum Refusal {
    /** The stream was closed. */
    CLOSED,
    /** {@code maxInflightPerKind} messages of its kind were unanswered. */
    FULL,
    /** No call could be opened, or it ended while the message was written. */
    NO_STREAM
  }

  /** How a message that was taken ended without an answer. */
  public enum Failure {
    /** No answer within the timeout. */
    TIMEOUT,
    /** Its call failed or the peer ended it (and it was not, or no longer, sent again). */
    BROKEN,
    /** The stream was closed before the message left. */
    CLOSED
  }

  /** When a message goes on the wire. */
  public enum Flow {
    /** While the call is ready; the others wait in order (the peer's {@code request(n)}). */
    WAIT_FOR_READY,
    /** At once; gRPC buffers what the connection cannot take yet. */
    AT_ONCE
  }

  /**
   * What the stream's user decides and is told.
   *
   * @param <A> the peer's answers
   * @param <H> what the sender keeps of one message
   */
  public interface Listener<A, H> {

    /**
     * Under the stream's lock: a message entered ({@code +1}) or left ({@code -1}) the unanswered
     * ones (a gauge); must neither block nor call the stream.
     */
    void counted(H message, int delta);

    /** Under the stream's lock: whether a message whose call broke is sent once more. */
    boolean resendAfterBreak(H message);

    /** The peer answered the message. */
    void answered(H message, A answer);

    /** The message ended without an answer; {@code why} says why the call broke, if it did. */
    void failed(H message, Failure failure, String why);

    /**
     * The call broke: {@code unanswered} messages were on it, {@code resent} of them sent again.
     */
    void broken(String why, int unanswered, int resent);
  }

  /**
   * A stream's bounds.
   *
   * @param kinds the kinds of messages, numbered from 0, each with its own allowance
   * @param maxInflightPerKind unanswered messages of one kind
   * @param timeout the deadline of each message
   */
  public record Bounds(Flow flow, int kinds, int maxInflightPerKind, Duration timeout) {}

  private final String logPrefix;
  private final Function<StreamObserver<A>, StreamObserver<Q>> open;
  private final ToLongFunction<A> answerSeq;
  private final Bounds bounds;
  private final ScheduledExecutorService timer;
  private final @Nullable PressureGauge pressure;
  private final Listener<A, H> listener;
  private final int highWater;
  private final int lowWater;
  private final Object lock = new Object();
  private final int[] inflightByKind;
  private @Nullable Call call;
  private @Nullable Call closing;
  private long nextSeq;
  private int inflight;
  private boolean saturated;
  private boolean closed;

  /**
   * @param logPrefix before this class's own log lines, e.g. {@code [forward|a->b]}
   * @param open opens the call (the stub's bidirectional method)
   * @param answerSeq the sequence number an answer repeats
   * @param timer runs the deadlines
   * @param pressure counts this stream while it is saturated; null for none
   */
  public PeerStream(
      String logPrefix,
      Function<StreamObserver<A>, StreamObserver<Q>> open,
      ToLongFunction<A> answerSeq,
      Bounds bounds,
      ScheduledExecutorService timer,
      @Nullable PressureGauge pressure,
      Listener<A, H> listener) {
    this.logPrefix = logPrefix;
    this.open = open;
    this.answerSeq = answerSeq;
    this.bounds = bounds;
    this.timer = timer;
    this.pressure = pressure;
    this.listener = listener;
    this.highWater = Math.max(1, bounds.maxInflightPerKind() * 3 / 4);
    this.lowWater = Math.max(0, Math.min(highWater - 1, bounds.maxInflightPerKind() / 2));
    this.inflightByKind = new int[bounds.kinds()];
  }

  /**
   * Sends a message, or queues it until the call is ready; its end is told to the listener.
   *
   * @param kind which allowance it counts against
   * @param handle what the listener is told about
   * @param message the message with the sequence number it is given
   * @return null if taken, else why not (the listener is told nothing then)
   */
  public @Nullable Refusal send(int kind, H handle, LongFunction<Q> message) {
    Sent sent;
    int pressureDelta;
    synchronized (lock) {
      if (closed) {
        return Refusal.CLOSED;
      }
      if (inflightByKind[kind] >= bounds.maxInflightPerKind()) {
        return Refusal.FULL;
      }
      sent = write(kind, handle, message, false);
      if (sent == null) {
        return Refusal.NO_STREAM;
      }
      pressureDelta = updateSaturation();
    }
    applyPressure(pressureDelta);
    startDeadline(sent);
    return null;
  }

  /**
   * Writes (or queues) a message on the current call, opening one if there is none; under the lock.
   *
   * @return null if it did not leave
   */
  private @Nullable Sent write(int kind, H handle, LongFunction<Q> message, boolean resent) {
    Call current = call;
    if (current == null) {
      current = new Call();
      call = current;
      open.apply(current); // calls beforeStart(), which sets current.requests
    }
    if (current.broken) {
      // With a direct executor a call to a dead channel fails inside open().
      return null;
    }
    long seq = nextSeq++;
    Sent sent = new Sent(current, seq, kind, handle, message, resent);
    current.pending.put(seq, sent);
    count(sent, 1);
    ClientCallStreamObserver<Q> requests = current.requests();
    if (bounds.flow() == Flow.WAIT_FOR_READY
        && (!current.unsent.isEmpty() || !requests.isReady())) {
      current.unsent.add(sent);
      return sent;
    }
    try {
      requests.onNext(sent.message);
    } catch (RuntimeException e) {
      // The call ended in between (its onError is on its way): this message did not leave.
      if (current.pending.remove(seq) != null) {
        count(sent, -1);
      }
      LOG.debug("{} not sent: {}", logPrefix, e.toString());
      return null;
    }
    return sent;
  }

  /** Counts a message in or out of its kind's allowance; under the lock. */
  private void count(Sent sent, int delta) {
    inflightByKind[sent.kind] += delta;
    inflight += delta;
    listener.counted(sent.handle, delta);
  }

  private void startDeadline(Sent sent) {
    try {
      sent.deadline =
          timer.schedule(() -> expire(sent), bounds.timeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      expire(sent); // shutting down
    }
  }

  /** Stops taking messages, fails those not yet sent and half-closes the call. */
  public void close() {
    List<Sent> unsent = new ArrayList<>();
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
      for (Sent sent : current.unsent) {
        if (current.pending.remove(sent.seq) != null) {
          count(sent, -1);
          unsent.add(sent);
        }
      }
      current.unsent.clear();
      pressureDelta = updateSaturation();
      if (!current.broken) {
        try {
          current.requests().onCompleted();
        } catch (RuntimeException e) {
          LOG.debug("{} half-close failed: {}", logPrefix, e.toString());
        }
      }
    }
    applyPressure(pressureDelta);
    for (Sent sent : unsent) {
      sent.cancelDeadline();
      listener.failed(sent.handle, Failure.CLOSED, "stream closed");
    }
  }

  /** What the sender keeps of every message not yet answered (for a graceful shutdown). */
  public List<H> unanswered() {
    synchronized (lock) {
      List<H> handles = new ArrayList<>();
      addUnanswered(call, handles);
      addUnanswered(closing, handles);
      return handles;
    }
  }

  private void addUnanswered(@Nullable Call from, List<H> handles) {
    if (from != null) {
      from.pending.values().forEach(sent -> handles.add(sent.handle));
    }
  }

  /** Messages not yet answered, all kinds. */
  public int inflight() {
    synchronized (lock) {
      return inflight;
    }
  }

  private void expire(Sent sent) {
    int pressureDelta;
    synchronized (lock) {
      if (sent.call.pending.remove(sent.seq) == null) {
        return; // answered meanwhile
      }
      count(sent, -1);
      pressureDelta = updateSaturation();
    }
    applyPressure(pressureDelta);
    listener.failed(sent.handle, Failure.TIMEOUT, "no answer in time");
  }

  private void onAnswer(Call from, A answer) {
    Sent sent;
    int pressureDelta;
    synchronized (lock) {
      sent = from.pending.remove(answerSeq.applyAsLong(answer));
      if (sent == null) {
        return; // timed out already
      }
      count(sent, -1);
      pressureDelta = updateSaturation();
    }
    applyPressure(pressureDelta);
    sent.cancelDeadline();
    listener.answered(sent.handle, answer);
  }

  private void onBroken(Call from, String why) {
    List<Sent> unanswered;
    List<Sent> failed = new ArrayList<>();
    List<Sent> resent = new ArrayList<>();
    int pressureDelta;
    synchronized (lock) {
      from.broken = true;
      unanswered = new ArrayList<>(from.pending.values());
      unanswered.sort(Comparator.comparingLong(sent -> sent.seq));
      from.pending.clear();
      from.unsent.clear();
      unanswered.forEach(sent -> count(sent, -1));
      if (call == from) {
        call = null; // the next message opens a new call
      }
      // Under the lock, so no later message overtakes them.
      for (Sent sent : unanswered) {
        boolean resend = !closed && !sent.resent && listener.resendAfterBreak(sent.handle);
        Sent again = resend ? write(sent.kind, sent.handle, sent.build, true) : null;
        if (again == null) {
          failed.add(sent);
        } else {
          resent.add(again);
        }
      }
      pressureDelta = updateSaturation();
    }
    applyPressure(pressureDelta);
    listener.broken(why, unanswered.size(), resent.size());
    for (Sent sent : unanswered) {
      sent.cancelDeadline();
    }
    resent.forEach(this::startDeadline);
    for (Sent sent : failed) {
      listener.failed(sent.handle, Failure.BROKEN, why);
    }
  }

  private void drain(Call from) {
    synchronized (lock) {
      ClientCallStreamObserver<Q> requests = from.requests();
      Sent next;
      while (!from.broken && requests.isReady() && (next = from.unsent.poll()) != null) {
        if (from.pending.containsKey(next.seq)) {
          requests.onNext(next.message);
        }
      }
    }
  }

  /** Under the lock: the change (+1, -1, 0) this stream makes to the pressure gauge. */
  private int updateSaturation() {
    if (pressure == null) {
      return 0;
    }
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
    PressureGauge gauge = pressure;
    if (gauge == null) {
      return;
    }
    if (delta > 0) {
      gauge.increment();
    } else if (delta < 0) {
      gauge.decrement();
    }
  }

  /** One message sent (or waiting to be) and not yet answered. */
  private final class Sent {
    final Call call;
    final long seq;
    final int kind;
    final H handle;
    final LongFunction<Q> build; // the message again, with another sequence number
    final Q message;
    final boolean resent; // sent once more, after its first call broke
    volatile @Nullable ScheduledFuture<?> deadline;

    Sent(Call call, long seq, int kind, H handle, LongFunction<Q> build, boolean resent) {
      this.call = call;
      this.seq = seq;
      this.kind = kind;
      this.handle = handle;
      this.build = build;
      this.message = build.apply(seq);
      this.resent = resent;
    }

    void cancelDeadline() {
      ScheduledFuture<?> scheduled = deadline;
      if (scheduled != null) {
        scheduled.cancel(false);
      }
    }
  }

  /** One gRPC call; replaced by a new one when it breaks. */
  private final class Call implements ClientResponseObserver<Q, A> {
    final Map<Long, Sent> pending = new HashMap<>();
    final ArrayDeque<Sent> unsent = new ArrayDeque<>();
    boolean broken;
    private @Nullable ClientCallStreamObserver<Q> requests;

    ClientCallStreamObserver<Q> requests() {
      ClientCallStreamObserver<Q> observer = requests;
      if (observer == null) {
        throw new IllegalStateException("call not started");
      }
      return observer;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
      requests = requestStream;
      if (bounds.flow() == Flow.WAIT_FOR_READY) {
        requestStream.setOnReadyHandler(() -> drain(this));
      }
    }

    @Override
    public void onNext(A answer) {
      onAnswer(this, answer);
    }

    @Override
    public void onError(Throwable error) {
      Status status = Status.fromThrowable(error);
      String description = status.getDescription();
      onBroken(this, status.getCode() + (description == null ? "" : " " + description));
    }

    @Override
    public void onCompleted() {
      onBroken(this, "the peer ended the stream");
    }
  }
}
