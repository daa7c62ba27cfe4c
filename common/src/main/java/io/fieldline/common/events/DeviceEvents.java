package io.fieldline.common.events;

import io.fieldline.common.DeviceId;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The one path for events of a device to whoever listens to it: MQTT sessions now, live WebSocket
 * subscriptions later. On a single node it is {@link LocalDeviceEvents}; in a cluster the event
 * also reaches the listeners on every other node (the device's session may be on any node, not only
 * its owner's), and the answer counts them all.
 */
public interface DeviceEvents {

  /**
   * Hands {@code event} to every listener of its device on every reachable node.
   *
   * @return how many listeners took it ({@link DeviceEventListener#onEvent} returned true); never
   *     fails: an unreachable node counts as none
   */
  CompletionStage<Integer> publish(DeviceEvent event);

  /**
   * Like {@link #publish}, but only to the listeners on the nodes named (this node's own if its id
   * is among them): for frequent events whose interested nodes are known, such as stored telemetry
   * for the nodes watching a device. On a single node it is {@link #publish}.
   *
   * @param nodeIds the receiving nodes' ids
   */
  default CompletionStage<Integer> publishTo(Set<String> nodeIds, DeviceEvent event) {
    return publish(event);
  }

  /** Registers {@code listener} for the events of {@code device} on this node, until closed. */
  Subscription subscribe(DeviceId device, DeviceEventListener listener);

  /** A listener's registration; closing it twice is harmless. */
  @FunctionalInterface
  interface Subscription extends AutoCloseable {
    @Override
    void close();
  }
}
