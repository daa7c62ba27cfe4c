package io.fieldline.common.port;

import io.fieldline.common.DeviceId;

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

  /**
   * Closes this node's open session of {@code device}, if there is one, because its credential was
   * replaced or the device deleted: the client is told so where its protocol can say it (MQTT 5:
   * DISCONNECT 0x87, not authorized) instead of being told another connection took over.
   *
   * @return whether a session was open (and is now closing)
   */
  default boolean revokeSession(DeviceId device) {
    return closeSession(device);
  }
}
