package io.fieldline.transport.http;

import io.fieldline.common.DeviceId;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.transport.http.DeviceApiMetrics.RpcOutcome;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The two-way server-side RPC requests this node handed to a device's long poll, each waiting for
 * the device's {@code POST /api/v1/{token}/rpc/{id}} until the request's {@code timeout} after it
 * was handed out: the HTTP counterpart of the MQTT session's tracked requests. A reply reaches the
 * request's {@link RpcCallback} (and so its REST caller, on whichever node it waits); one that
 * matches nothing (unknown id, timed out, answered already, or handed out by another node) is
 * counted and dropped. At most {@code max-pending-rpc} per device; the ids are unique on this node.
 *
 * <p>Thread-safe: each device's requests are changed only inside the map's {@code compute} for it.
 */
final class RpcReplies {

  private record Pending(RpcCallback callback, @Nullable ScheduledFuture<?> expiry) {}

  private final ConcurrentHashMap<DeviceId, Map<Integer, Pending>> byDevice =
      new ConcurrentHashMap<>();
  private final AtomicInteger lastId = new AtomicInteger();
  private final int maxPerDevice;
  private final ScheduledExecutorService timer;
  private final DeviceApiMetrics metrics;

  RpcReplies(int maxPerDevice, ScheduledExecutorService timer, DeviceApiMetrics metrics) {
    this.maxPerDevice = maxPerDevice;
    this.timer = timer;
    this.metrics = metrics;
  }

  /** A fresh request id, positive, unique on this node until it wraps after 2^31 requests. */
  int nextId() {
    int id = lastId.incrementAndGet() & Integer.MAX_VALUE;
    return id == 0 ? nextId() : id;
  }

  /**
   * Starts waiting for the reply to request {@code id} of {@code device}, for {@code
   * timeoutMillis}.
   *
   * @return false when the device has as many requests waiting as it may (nothing was tracked)
   */
  boolean track(DeviceId device, int id, RpcCallback callback, long timeoutMillis) {
    boolean[] tracked = {false};
    byDevice.compute(
        device,
        (key, pending) -> {
          Map<Integer, Pending> map = pending == null ? new HashMap<>() : pending;
          if (map.size() < maxPerDevice) {
            map.put(id, new Pending(callback, null));
            tracked[0] = true;
          }
          return map.isEmpty() ? null : map;
        });
    if (!tracked[0]) {
      return false;
    }
    ScheduledFuture<?> expiry;
    try {
      expiry = timer.schedule(() -> expire(device, id), timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException stopping) {
      take(device, id);
      return false;
    }
    byDevice.computeIfPresent(
        device,
        (key, map) -> {
          map.computeIfPresent(id, (i, pending) -> new Pending(pending.callback(), expiry));
          return map;
        });
    return true;
  }

  /** Forgets request {@code id} of {@code device} without a reply (it was never handed out). */
  void untrack(DeviceId device, int id) {
    Pending pending = take(device, id);
    if (pending != null && pending.expiry() != null) {
      pending.expiry().cancel(false);
    }
  }

  /**
   * The device replied to request {@code id}.
   *
   * @return whether a request was waiting for it
   */
  boolean reply(DeviceId device, int id, String body) {
    Pending pending = take(device, id);
    if (pending == null) {
      return false;
    }
    if (pending.expiry() != null) {
      pending.expiry().cancel(false);
    }
    pending.callback().responded(body);
    metrics.rpc(RpcOutcome.RESPONDED);
    return true;
  }

  private void expire(DeviceId device, int id) {
    if (take(device, id) != null) {
      // The request's own deadline answers its caller; only this node's waiting ends here.
      metrics.rpc(RpcOutcome.EXPIRED);
    }
  }

  private @Nullable Pending take(DeviceId device, int id) {
    Object[] taken = {null};
    byDevice.computeIfPresent(
        device,
        (key, map) -> {
          taken[0] = map.remove(id);
          return map.isEmpty() ? null : map;
        });
    return (Pending) taken[0];
  }

  /** Requests waiting for a reply on this node (for tests). */
  int waiting() {
    return byDevice.values().stream().mapToInt(Map::size).sum();
  }
}
