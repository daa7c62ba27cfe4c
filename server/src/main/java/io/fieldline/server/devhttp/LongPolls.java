package io.fieldline.server.devhttp;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent.RpcSubscribed;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.server.devhttp.DeviceApiMetrics.PollOutcome;
import io.fieldline.server.devhttp.DeviceApiMetrics.Refusal;
import io.fieldline.server.rest.HttpJson;
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
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long polls waiting on this node ({@code GET .../attributes/updates} and {@code GET .../rpc}),
 * each a {@link LongPoll} listening to its device's events from {@link #start} until it answers:
 * with what it waited for, with 408 at its timeout (ThingsBoard's answer when nothing came), or
 * with 503 when the server stops. Bounded per device and per node ({@link DeviceBudgets}).
 *
 * <p>An RPC poll announces itself like an MQTT session subscribing to {@code
 * v1/devices/me/rpc/request/+}: it publishes {@code RpcSubscribed}, on which the RPC service on
 * every node offers the device's waiting calls again, and the device's owner its stored
 * (persistent) requests. While no poll waits, a request waits in the RPC service (a lightweight one
 * until its timeout, a persistent one in storage), exactly as for an MQTT device that is not
 * subscribed.
 *
 * <p>Thread-safe.
 */
final class LongPolls {

  private static final Logger LOG = LoggerFactory.getLogger(LongPolls.class);

  private final DeviceEvents events;
  private final DeviceBudgets budgets;
  private final RpcReplies replies;
  private final ScheduledExecutorService timer;
  private final DeviceApiMetrics metrics;
  private final Set<LongPoll> waiting = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  LongPolls(
      DeviceEvents events,
      DeviceBudgets budgets,
      RpcReplies replies,
      ScheduledExecutorService timer,
      DeviceApiMetrics metrics) {
    this.events = events;
    this.budgets = budgets;
    this.replies = replies;
    this.timer = timer;
    this.metrics = metrics;
  }

  /**
   * Starts a poll of {@code device} that waits at most {@code timeout}; completes with its answer.
   */
  CompletionStage<HttpResponse> start(LongPoll.Kind kind, DeviceId device, Duration timeout) {
    if (closed) {
      return CompletableFuture.completedFuture(stopped());
    }
    String refusal = budgets.startPoll(device);
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
              timeout.toMillis(),
              TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException stopping) {
      budgets.pollDone(device);
      return CompletableFuture.completedFuture(stopped());
    }
    DeviceEvents.Subscription subscription = events.subscribe(device, poll);
    // Listed (and counted by the gauge) once it hears its device's events; the clean-up below runs
    // at once if it has already ended.
    waiting.add(poll);
    poll.answer()
        .whenComplete(
            (response, error) -> {
              deadline.cancel(false);
              subscription.close();
              waiting.remove(poll);
              budgets.pollDone(device);
            });
    if (closed) {
      poll.end(stopped(), PollOutcome.STOPPED); // closeAll ran before this poll was listed
    }
    if (kind == LongPoll.Kind.RPC && !poll.answer().isDone()) {
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

  /** Long polls waiting now (a gauge). */
  int waiting() {
    return waiting.size();
  }

  /** Answers every waiting poll 503 and refuses new ones: the server stops. */
  void closeAll() {
    closed = true;
    for (LongPoll poll : List.copyOf(waiting)) {
      poll.end(stopped(), PollOutcome.STOPPED);
    }
  }

  private static HttpResponse timedOut(LongPoll.Kind kind, Duration timeout) {
    String what =
        kind == LongPoll.Kind.RPC ? "no server-side RPC request" : "no shared-attribute update";
    return HttpJson.error(408, what + " within " + timeout.toMillis() + " ms");
  }

  private static HttpResponse stopped() {
    return HttpJson.error(503, "the server is shutting down");
  }
}
