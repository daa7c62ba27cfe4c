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
  private final List<DeviceEventListener> everyDevice = new CopyOnWriteArrayList<>();

  @Override
  public CompletionStage<Integer> publish(DeviceEvent event) {
    return CompletableFuture.completedFuture(deliver(event));
  }

  /** Hands {@code event} to this node's listeners of its device; returns how many took it. */
  public int deliver(DeviceEvent event) {
    List<DeviceEventListener> current = listeners.get(event.deviceId());
    int took = current == null ? 0 : deliver(event, current);
    return everyDevice.isEmpty() ? took : took + deliver(event, everyDevice);
  }

  private static int deliver(DeviceEvent event, List<DeviceEventListener> to) {
    int took = 0;
    for (DeviceEventListener listener : to) {
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

  /**
   * Registers {@code listener} for the events of every device on this node, published here or
   * delivered from another node (after each device's own listeners). For node-wide services, such
   * as the one offering waiting RPC requests again when a device subscribes.
   */
  public DeviceEvents.Subscription subscribeAll(DeviceEventListener listener) {
    everyDevice.add(listener);
    return () -> everyDevice.remove(listener);
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
