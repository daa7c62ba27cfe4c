package io.fieldline.common.feed;

import io.fieldline.common.DeviceId;
import java.util.Set;

/**
 * Which nodes wrote a device's messages over a span of time: in a cluster, the device's owners on
 * every ring in force during it (more than one when the ring changed and the device moved). Export
 * uses it to keep a moved device's records in order: a record written by the new owner waits until
 * the former owner's log has delivered everything older.
 */
public interface DeviceMoves {

  /** A single node: every device is always written here, nothing ever moves. */
  DeviceMoves NONE = (device, fromMillis, toMillis) -> Set.of();

  /**
   * The device's owners on the rings in force at any time in {@code [fromMillis, toMillis]}, as far
   * as this node remembers; empty on a single node.
   */
  Set<String> owners(DeviceId device, long fromMillis, long toMillis);
}
