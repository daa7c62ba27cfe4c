package io.fieldline.common.events;

import io.fieldline.common.DeviceId;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of this node, by device: {@link #publish} hands an event to each listener of its
 * device, in registration order, on the caller's thread. A listener that throws is logged and
 * counted as not having taken the event; the others still get it. Thread-safe.
 */
public final class LocalDeviceEvents implements DeviceEvents {

  private static final Logger LOG = LoggerFactory.getLogger(LocalDeviceEvents.class);

  private final ConcurrentHashMap<DeviceId, List<DeviceEventListener>> listeners =
      new ConcurrentHashMap<>();

  @Override
  public CompletionStage<Integer> publish(DeviceEvent event) {
    return CompletableFuture.completedFuture(deliver(event));
  }

  /** Hands {@code event} to this node's listeners of its device; returns how many took it. */
  public int deliver(DeviceEvent event) {
    List<DeviceEventListener> current = listeners.get(event.deviceId());
    if (current == null) {
      return 0;
    }
    int took = 0;
    for (DeviceEventListener listener : current) {
      try {
        if (listener.onEvent(event)) {
          took++;
        }
      } catch (RuntimeException e) {
        LOG.warn("device event listener failed on {}", event.getClass().getSimpleName(), e);
      }
    }
    return took;
  }

  @Override
  public Subscription subscribe(DeviceId device, DeviceEventListener listener) {
    // compute, not computeIfAbsent + add: a concurrent close must not drop the list in between.
    listeners.compute(
        device,
        (d, list) -> {
          List<DeviceEventListener> kept = list == null ? new CopyOnWriteArrayList<>() : list;
          kept.add(listener);
          return kept;
        });
    return () ->
        listeners.computeIfPresent(
            device,
            (d, list) -> {
              list.remove(listener);
              return list.isEmpty() ? null : list;
            });
  }

  /** Devices with at least one listener on this node (a gauge). */
  public int devicesListened() {
    return listeners.size();
  }
}
