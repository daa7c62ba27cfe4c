package io.fieldline.transport.mqtt.session;

import io.fieldline.common.DeviceId;
import io.fieldline.common.port.SessionCloser;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * One MQTT session per device on this node, and the state that CleanSession=0 sessions keep between
 * connections.
 *
 * <p>A second CONNECT for the same device takes over: the older connection is closed (ThingsBoard's
 * one-session-per-device rule). The state of a persistent session ({@link SessionState}: granted
 * subscriptions, QoS 2 packet ids awaiting PUBREL, QoS 1 messages for the device not yet
 * acknowledged) survives its connection for as long as the connection asked (3.1.1: {@code
 * session-expiry}; MQTT 5: its Session Expiry Interval, capped by {@code session-expiry}); a
 * reconnect within that time gets session-present = 1 (§3.2.2.2), which is what makes clients
 * retransmit their unacknowledged PUBLISHes, and the server its own. A session that ends (expired,
 * replaced by a clean start, taken over by another node) gives up what it held: its undelivered
 * server-side RPCs are reported to their callbacks. State is in memory: it does not survive a
 * restart of this node, and then clients simply see session-present = 0. Nor does it follow the
 * device to another node: when the device connects there, the session here ends ({@link
 * #closeSession}).
 *
 * <p>The registry is this node's {@link SessionCloser}: the cluster calls {@link #closeSession}
 * when a device's session was accepted on another node. It depends on nothing, so the composition
 * root builds it first and hands it both to the cluster and to the {@code MqttServer}. Telling the
 * other nodes about a session accepted here is the connect path's job, not the registry's.
 *
 * <p>Thread-safe: called from every event loop, the server's expiry sweep and the cluster's
 * threads.
 */
public final class SessionRegistry implements SessionCloser {

  /** A connection as the registry sees it: something it can close when another takes over. */
  public interface Member {
    /** Close this connection because another one took over its device. Any thread. */
    void takeOver();

    /** Close this connection because its credential was revoked. Any thread. */
    default void revoke() {
      takeOver();
    }
  }

  /**
   * The outcome of registering a connection.
   *
   * @param state the session's state, new or resumed
   * @param sessionPresent whether {@code state} was resumed
   */
  public record Registration(SessionState state, boolean sessionPresent) {}

  private final Map<DeviceId, Member> active = new ConcurrentHashMap<>();
  private final Map<DeviceId, SessionState> persistent = new ConcurrentHashMap<>();

  /** An empty registry; each connection tells {@link #unregister} how long its session lasts. */
  public SessionRegistry() {}

  /**
   * Registers a newly authenticated connection, closing any older one of the same device.
   *
   * @param cleanStart MQTT 3.1.1 CleanSession / MQTT 5 Clean Start: discard any earlier session
   * @param keep whether the session outlives this connection (3.1.1 CleanSession = 0, MQTT 5 a
   *     non-zero Session Expiry Interval); how long is given to {@link #unregister}
   */
  public Registration register(
      DeviceId device, boolean cleanStart, boolean keep, Member connection) {
    Member previous = active.put(device, connection);
    if (previous != null && previous != connection) {
      previous.takeOver();
    }
    if (cleanStart) {
      // MQTT 3.1.1 §3.1.2.4, MQTT 5 §3.1.2.4: a clean start discards any previous session.
      end(persistent.remove(device));
      if (!keep) {
        return new Registration(new SessionState(false), false);
      }
    }
    long now = System.nanoTime();
    SessionState[] resumed = new SessionState[1];
    SessionState[] expired = new SessionState[1];
    SessionState state =
        persistent.compute(
            device,
            (id, existing) -> {
              if (existing != null && existing.isLiveAt(now)) {
                resumed[0] = existing;
                existing.keepWhileConnected();
                return existing;
              }
              expired[0] = existing;
              return new SessionState(true);
            });
    end(expired[0]);
    return new Registration(state, resumed[0] != null);
  }

  /**
   * Records that a connection closed. Only the device's current connection counts: a connection
   * that was taken over leaves the session to its successor.
   *
   * @param expiry how long the session's state is kept from now; zero discards it
   */
  public void unregister(DeviceId device, Duration expiry, Member connection) {
    if (!active.remove(device, connection)) {
      return;
    }
    if (expiry.isZero()) {
      end(persistent.remove(device));
      return;
    }
    SessionState state = persistent.get(device);
    if (state != null) {
      state.expireAt(System.nanoTime() + saturatedNanos(expiry));
    }
  }

  // Outside any map operation: ending a session reports its undelivered RPCs to their callbacks.
  private static void end(@Nullable SessionState state) {
    if (state != null) {
      state.end();
    }
  }

  private static long saturatedNanos(Duration duration) {
    try {
      return duration.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE / 2;
    }
  }

  /**
   * Closes this node's session of {@code device}, if any, because it connected elsewhere in the
   * cluster. Any thread; the close itself happens on the connection's event loop.
   *
   * <p>A kept session ends too, connected or not: the device's session lives on the other node now,
   * and what this one kept of it is stale. Its requests not yet delivered are reported undelivered
   * now (those of a connected session as its connection closes), so that the RPC service can offer
   * them where the device is, instead of at the session's expiry, long after their callers gave up.
   * The device's next connection to this node gets a new session (session-present = 0).
   *
   * @return whether a connection was open (and is now closing)
   */
  @Override
  public boolean closeSession(DeviceId device) {
    end(persistent.remove(device));
    Member connection = active.get(device);
    if (connection == null) {
      return false;
    }
    connection.takeOver();
    return true;
  }

  /**
   * Closes this node's session of {@code device}, if any, because its credential was replaced or
   * the device deleted. Any thread.
   *
   * @return whether a session was open (and is now closing)
   */
  @Override
  public boolean revokeSession(DeviceId device) {
    Member connection = active.get(device);
    if (connection == null) {
      return false;
    }
    connection.revoke();
    return true;
  }

  /** Ends persistent sessions whose expiry has passed; called periodically. */
  public int expire() {
    long now = System.nanoTime();
    int ended = 0;
    for (Map.Entry<DeviceId, SessionState> entry : persistent.entrySet()) {
      SessionState state = entry.getValue();
      if (!state.isLiveAt(now) && persistent.remove(entry.getKey(), state)) {
        state.end();
        ended++;
      }
    }
    return ended;
  }

  /** Devices with an open connection on this node. */
  public int activeSessions() {
    return active.size();
  }

  /** Sessions kept for CleanSession=0 devices, connected or not. */
  public int persistentSessions() {
    return persistent.size();
  }
}
