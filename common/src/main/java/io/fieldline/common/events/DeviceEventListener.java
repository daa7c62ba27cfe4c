package io.fieldline.common.events;

/** Hears the events of one device on this node (registered with {@link DeviceEvents#subscribe}). */
@FunctionalInterface
public interface DeviceEventListener {

  /**
   * Handles one event. Called from any thread, possibly concurrently with other events of the same
   * device: it must not block (hand the work to the listener's own thread) and must answer at once.
   *
   * @return whether this listener took the event: for {@link DeviceEvent.RpcRequested}, that it
   *     will deliver the request and report through its callback; for other events, that it
   *     forwards it to a client (counted, nothing else depends on it)
   */
  boolean onEvent(DeviceEvent event);
}
