package io.fieldline.common;

/**
 * Closes this node's MQTT session of a device. The transport implements it (its session registry);
 * the cluster calls it when another node has taken the device's session over. Built before either
 * of them, so neither needs the other to exist first. Must not block: closing is asynchronous.
 */
@FunctionalInterface
public interface SessionCloser {

  /**
   * Closes this node's open session of {@code device}, if there is one.
   *
   * @return whether a session was open (and is now closing)
   */
  boolean closeSession(DeviceId device);
}
