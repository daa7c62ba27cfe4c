package io.fieldline.cluster.takeover;

import io.fieldline.common.DeviceId;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * When this node last accepted a session of each device, for a short while: a takeover notice from
 * another node that is older than this node's own session of the device was overtaken (the device
 * moved back here meanwhile) and must not close it. Entries older than the retention are pruned; no
 * entry means "this node's session, if any, is older than any notice still in flight".
 *
 * <p>Thread-safe. Times are wall-clock epoch milliseconds, compared across nodes: the nodes' clocks
 * must agree to well within the time a device takes to reconnect (NTP is plenty).
 */
public final class LocalSessions {

  private final Map<DeviceId, Long> openedAt = new ConcurrentHashMap<>();
  private final long retentionMillis;

  /**
   * @param retentionMillis how long an entry is kept; longer than any notice's deadline
   */
  public LocalSessions(long retentionMillis) {
    this.retentionMillis = retentionMillis;
  }

  void opened(DeviceId device, long atMillis) {
    openedAt.merge(device, atMillis, Math::max);
  }

  /** Whether this node accepted a session of {@code device} after {@code millis}. */
  boolean openedAfter(DeviceId device, long millis) {
    Long local = openedAt.get(device);
    return local != null && local > millis;
  }

  /** Drops entries older than the retention; called periodically. */
  public void prune(long nowMillis) {
    openedAt.values().removeIf(at -> nowMillis - at > retentionMillis);
  }
}
