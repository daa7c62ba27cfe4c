package io.fieldline.transport.http;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvent.AttributesDeleted;
import io.fieldline.common.events.DeviceEvent.AttributesUpdated;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.http.DeviceApiMetrics.PollOutcome;
import io.fieldline.transport.http.DeviceApiMetrics.RpcOutcome;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * One waiting long poll, as a listener of its device's events (an RPC poll through its device's
 * {@link RpcWatch}): the first event it is waiting for becomes its answer, and it takes nothing
 * after that.
 *
 * <ul>
 *   <li>{@link Kind#ATTRIBUTES} ({@code GET .../attributes/updates}): a {@code SHARED_SCOPE} {@code
 *       AttributesUpdated} answers {@code {"key": value, ...}}, an {@code AttributesDeleted} {@code
 *       {"deleted": [...]}} — the payloads an MQTT session gets on {@code
 *       v1/devices/me/attributes}.
 *   <li>{@link Kind#RPC} ({@code GET .../rpc}): an {@code RpcRequested} answers {@code {"id": n,
 *       "method": ..., "params": ...}}. Taking it makes the poll the request's session: its
 *       callback hears {@code sent()} and {@code delivered()} (the answer is on its way, as for an
 *       MQTT subscription at QoS 0), and a two-way request waits in {@link RpcReplies} for the
 *       device's reply under id {@code n}. A request the poll cannot take (it answered already, or
 *       the device has as many requests waiting for replies as it may) is left to the RPC service,
 *       which offers it again at the device's next poll.
 * </ul>
 *
 * <p>Thread-safe: events come from any thread, possibly at once; the answer is a {@link
 * CompletableFuture}, completed once (by an event, the timeout or the server stopping).
 */
final class LongPoll implements DeviceEventListener {

  /** What the poll waits for. */
  enum Kind {
    ATTRIBUTES,
    RPC
  }

  private final Kind kind;
  private final DeviceId device;
  private final RpcReplies replies;
  private final Executor reports;
  private final DeviceApiMetrics metrics;
  private final CompletableFuture<HttpResponse> answer = new CompletableFuture<>();

  /**
   * @param reports where the taken request's callback is told, off the thread that offered it;
   *     reports it no longer runs (the server stopping) are lost, see {@link #take}
   */
  LongPoll(
      Kind kind, DeviceId device, RpcReplies replies, Executor reports, DeviceApiMetrics metrics) {
    this.kind = kind;
    this.device = device;
    this.replies = replies;
    this.reports = reports;
    this.metrics = metrics;
  }

  Kind kind() {
    return kind;
  }

  DeviceId device() {
    return device;
  }

  CompletableFuture<HttpResponse> answer() {
    return answer;
  }

  /** Ends the poll with {@code response} unless it has ended; counts how. */
  boolean end(HttpResponse response, PollOutcome outcome) {
    if (answer.complete(response)) {
      metrics.pollEnded(outcome);
      return true;
    }
    return false;
  }

  @Override
  public boolean onEvent(DeviceEvent event) {
    if (answer.isDone()) {
      return false;
    }
    if (kind == Kind.ATTRIBUTES) {
      if (event instanceof AttributesUpdated updated
          && updated.scope() == AttributeScope.SHARED_SCOPE
          && !updated.entries().isEmpty()) {
        return end(DeviceJson.ok(DeviceJson.values(updated.entries())), PollOutcome.ANSWERED);
      }
      if (event instanceof AttributesDeleted deleted
          && deleted.scope() == AttributeScope.SHARED_SCOPE
          && !deleted.keys().isEmpty()) {
        return end(DeviceJson.ok(DeviceJson.deleted(deleted.keys())), PollOutcome.ANSWERED);
      }
      return false;
    }
    return event instanceof RpcRequested requested && take(requested.rpc(), requested.callback());
  }

  private boolean take(ToDeviceRpc rpc, RpcCallback callback) {
    int id = replies.nextId();
    boolean twoWay = !rpc.oneway();
    if (twoWay && !replies.track(device, id, callback, rpc.timeoutMillis())) {
      return false;
    }
    if (!end(DeviceJson.ok(DeviceJson.rpcRequest(id, rpc)), PollOutcome.ANSWERED)) {
      if (twoWay) {
        replies.untrack(device, id);
      }
      return false;
    }
    metrics.rpc(RpcOutcome.TAKEN);
    // Not on this thread: the offer that called this listener is still being published. When the
    // server stops, reports still queued on the timer are dropped: harmless, a persistent request
    // not reported sent stays QUEUED and is offered again after the restart (at least once), and a
    // lightweight call ends with the server anyway.
    Runnable report =
        () -> {
          callback.sent();
          callback.delivered();
        };
    try {
      reports.execute(report);
    } catch (RejectedExecutionException stopping) {
      report.run();
    }
    return true;
  }
}
