package io.fieldline.transport.http;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent.RpcSubscribed;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.transport.http.DeviceApiMetrics.PollOutcome;
import io.fieldline.transport.http.DeviceApiMetrics.Refusal;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long polls waiting on this node ({@code GET .../attributes/updates} and {@code GET .../rpc}),
 * each a {@link LongPoll} hearing its device's events from {@link #start} until it answers: with
 * what it waited for, with 408 at its timeout (ThingsBoard's answer when nothing came), or with 503
 * when the server stops. A poll's wait counts from the request's arrival, so that the time its
 * token look-up took does not carry it past the request timeout Pekko set from the same moment (it
 * would answer 503 while the poll still took a request, lost then). Bounded per device and per node
 * ({@link DeviceBudgets}).
 *
 * <p>An attribute poll listens to its device's events itself. RPC polls listen through their
 * device's {@link RpcWatch}, which lives from the device's first RPC poll until it has had none for
 * {@link #ANNOUNCE_INTERVAL}. A poll announces itself like an MQTT session subscribing to {@code
 * v1/devices/me/rpc/request/+} — it publishes {@code RpcSubscribed}, on which the RPC service on
 * every node offers the device's waiting calls again and the device's owner its stored (persistent)
 * requests, one storage read — only when that is needed: at the device's first poll, when a request
 * was offered since that none of its polls took, and at least once per interval. A device that
 * polls back to back is thus announced about once per interval, and still gets at its next poll a
 * request that arrived between two polls. While no poll waits, a request waits in the RPC service
 * (a lightweight one until its timeout, a persistent one in storage), exactly as for an MQTT device
 * that is not subscribed.
 *
 * <p>Thread-safe.
 */
final class LongPolls {

  /**
   * How long an announcement holds for a device that keeps polling without missing a request, and
   * how long a device's {@link RpcWatch} outlives its last RPC poll.
   */
  static final Duration ANNOUNCE_INTERVAL = Duration.ofSeconds(30);

  private static final Logger LOG = LoggerFactory.getLogger(LongPolls.class);

  private final DeviceEvents events;
  private final DeviceBudgets budgets;
  private final RpcReplies replies;
  private final ScheduledExecutorService timer;
  private final DeviceApiMetrics metrics;
  private final LongSupplier nanoClock;
  private final int maxWatched;
  private final long intervalNanos = ANNOUNCE_INTERVAL.toNanos();
  private final Set<LongPoll> waiting = ConcurrentHashMap.newKeySet();
  private final ConcurrentHashMap<DeviceId, RpcWatch> watches = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /**
   * @param nanoClock as {@link System#nanoTime()}: the clock of the requests' arrival times
   * @param maxWatched devices whose {@link RpcWatch} is kept after their last RPC poll ended, at
   *     most (beyond it, a device's watch goes with its last poll and its next poll announces)
   */
  LongPolls(
      DeviceEvents events,
      DeviceBudgets budgets,
      RpcReplies replies,
      ScheduledExecutorService timer,
      DeviceApiMetrics metrics,
      LongSupplier nanoClock,
      int maxWatched) {
    this.events = events;
    this.budgets = budgets;
    this.replies = replies;
    this.timer = timer;
    this.metrics = metrics;
    this.nanoClock = nanoClock;
    this.maxWatched = maxWatched;
  }

  /**
   * Starts a poll of {@code device} that answers at the latest {@code timeout} after the request
   * arrived; completes with its answer.
   *
   * @param arrivedNanos when the request arrived, on the nano clock
   */
  CompletionStage<HttpResponse> start(
      LongPoll.Kind kind, DeviceId device, Duration timeout, long arrivedNanos) {
    return start(kind, device, timeout, arrivedNanos, null, null);
  }

  /**
   * As {@link #start(LongPoll.Kind, DeviceId, Duration, long)}, for a request from {@code address}
   * (its per-address slot taken) on {@code connection} (null when unknown): a poll whose client
   * went away ends then (its slots freed), not at its timeout.
   */
  CompletionStage<HttpResponse> start(
      LongPoll.Kind kind,
      DeviceId device,
      Duration timeout,
      long arrivedNanos,
      @Nullable InetAddress address,
      @Nullable ClientConnection connection) {
    if (closed) {
      return CompletableFuture.completedFuture(stopped());
    }
    long left = timeout.toNanos() - (nanoClock.getAsLong() - arrivedNanos);
    if (left <= 0) {
      // The token look-up took the whole wait: answered at once, listening to nothing.
      metrics.pollEnded(PollOutcome.TIMEOUT);
      return CompletableFuture.completedFuture(timedOut(kind, timeout));
    }
    String refusal = budgets.startPoll(device, address);
    if (refusal != null) {
      metrics.refused(Refusal.TOO_MANY_POLLS, device.toString(), refusal);
      return CompletableFuture.completedFuture(DeviceApi.tooMany(refusal, Duration.ofSeconds(1)));
    }
    LongPoll poll = new LongPoll(kind, device, replies, timer, metrics);
    ScheduledFuture<?> deadline;
    try {
      deadline =
          timer.schedule(
              () -> poll.end(timedOut(kind, timeout), PollOutcome.TIMEOUT),
              left,
              TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException stopping) {
      budgets.pollDone(device, address);
      return CompletableFuture.completedFuture(stopped());
    }
    Runnable stopListening;
    boolean announce = false;
    if (kind == LongPoll.Kind.ATTRIBUTES) {
      stopListening = events.subscribe(device, poll)::close;
    } else {
      RpcWatch watch;
      RpcWatch.Added added;
      do {
        watch = watches.computeIfAbsent(device, this::newWatch);
        added = watch.add(poll, nanoClock.getAsLong(), intervalNanos);
        if (added == RpcWatch.Added.CLOSED) {
          watches.remove(device, watch); // swept meanwhile: replaced
        }
      } while (added == RpcWatch.Added.CLOSED);
      announce = added == RpcWatch.Added.ANNOUNCE;
      RpcWatch registered = watch;
      stopListening = () -> unwatch(device, registered, poll);
    }
    // Listed once it hears its device's events; the clean-up below runs at once if it has already
    // ended.
    waiting.add(poll);
    // The answer goes nowhere then: Pekko drops a response for a closed connection.
    Runnable forget =
        connection == null
            ? () -> {}
            : connection.whenClosed(() -> poll.end(clientGone(), PollOutcome.CLIENT_GONE));
    poll.answer()
        .whenComplete(
            (response, error) -> {
              forget.run();
              deadline.cancel(false);
              stopListening.run();
              waiting.remove(poll);
              budgets.pollDone(device, address);
            });
    if (closed) {
      poll.end(stopped(), PollOutcome.STOPPED); // closeAll ran before this poll was listed
      return poll.answer();
    }
    if (announce) {
      // Even if the poll already ended: the requests offered again then find no poll, which marks
      // them missed for the next one.
      metrics.rpcAnnounced();
      events
          .publish(new RpcSubscribed(device))
          .exceptionally(
              error -> {
                LOG.warn("[http-device|{}] RPC poll not announced: {}", device, error.toString());
                return 0;
              });
    }
    return poll.answer();
  }

  private RpcWatch newWatch(DeviceId device) {
    RpcWatch watch = new RpcWatch();
    watch.listen(events.subscribe(device, watch));
    return watch;
  }

  private void unwatch(DeviceId device, RpcWatch watch, LongPoll poll) {
    if (watch.remove(poll, nanoClock.getAsLong())
        && (closed || watches.size() > maxWatched)
        && watch.closeIfQuiet(nanoClock.getAsLong(), intervalNanos, true)) {
      watches.remove(device, watch);
    }
  }

  /** Forgets the watches of devices that have not polled for the interval; called now and then. */
  void sweep() {
    long now = nanoClock.getAsLong();
    watches.forEach(
        (device, watch) -> {
          if (watch.closeIfQuiet(now, intervalNanos, false)) {
            watches.remove(device, watch);
          }
        });
  }

  /** Long polls waiting now. */
  int waiting() {
    return waiting.size();
  }

  /** Devices whose RPC requests are watched now. */
  int watched() {
    return watches.size();
  }

  /** Answers every waiting poll 503 and refuses new ones: the server stops. */
  void closeAll() {
    closed = true;
    for (LongPoll poll : List.copyOf(waiting)) {
      poll.end(stopped(), PollOutcome.STOPPED);
    }
    watches.forEach(
        (device, watch) -> {
          watch.close();
          watches.remove(device, watch);
        });
  }

  private static HttpResponse timedOut(LongPoll.Kind kind, Duration timeout) {
    String what =
        kind == LongPoll.Kind.RPC ? "no server-side RPC request" : "no shared-attribute update";
    return HttpErrors.error(408, what + " within " + timeout.toMillis() + " ms");
  }

  private static HttpResponse clientGone() {
    return HttpErrors.error(408, "the client closed the connection");
  }

  private static HttpResponse stopped() {
    return HttpErrors.error(503, "the server is shutting down");
  }
}
