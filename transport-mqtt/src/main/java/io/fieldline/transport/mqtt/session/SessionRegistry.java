package io.fieldline.transport.mqtt.session;

import io.fieldline.common.DeviceId;
import io.fieldline.common.SessionCloser;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One MQTT session per device on this node, and the state that CleanSession=0 sessions keep between
 * connections.
 *
 * <p>A second CONNECT for the same device takes over: the older connection is closed (ThingsBoard's
 * one-session-per-device rule). The state of a persistent session ({@link SessionState}: granted
 * subscriptions and QoS 2 packet ids awaiting PUBREL) survives its connection for {@code
 * session-expiry}; a reconnect within that time gets session-present = 1 (MQTT 3.1.1 §3.2.2.2),
 * which is what makes clients retransmit their unacknowledged PUBLISHes. State is in memory: it
 * does not survive a restart of this node, and then clients simply see session-present = 0.
 *
 * <p>The registry is this node's {@link SessionCloser}: the cluster calls {@link #closeSession}
 * when a device's session was accepted on another node. It depends on nothing but its expiry, so
 * the composition root builds it first and hands it both to the cluster and to the {@code
 * MqttServer}. Telling the other nodes about a session accepted here is the connect path's job, not
 * the registry's.
 *
 * <p>Thread-safe: called from every event loop, the server's expiry sweep and the cluster's
 * threads.
 */
public final class SessionRegistry implements SessionCloser {

  /** A connection as the registry sees it: something it can close when another takes over. */
  public interface Member {
    /** Close this connection because another one took over its device. Any thread. */
    void takeOver();
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
  private final long expiryNanos;

  /**
   * @param sessionExpiry how long a CleanSession=0 session outlives its connection
   */
  public SessionRegistry(Duration sessionExpiry) {
    this.expiryNanos = sessionExpiry.toNanos();
  }

  /** Registers a newly authenticated connection, closing any older one of the same device. */
  public Registration register(DeviceId device, boolean cleanSession, Member connection) {
    Member previous = active.put(device, connection);
    if (previous != null && previous != connection) {
      previous.takeOver();
    }
    if (cleanSession) {
      // MQTT 3.1.1 §3.1.2.4: CleanSession=1 discards any previous session.
      persistent.remove(device);
      return new Registration(new SessionState(), false);
    }
    long now = System.nanoTime();
    SessionState[] resumed = new SessionState[1];
    SessionState state =
        persistent.compute(
            device,
            (id, existing) -> {
              if (existing != null && existing.isLiveAt(now)) {
                resumed[0] = existing;
                existing.keepWhileConnected();
                return existing;
              }
              return new SessionState();
            });
    return new Registration(state, resumed[0] != null);
  }

  /**
   * Records that a connection closed. Only the device's current connection counts: a connection
   * that was taken over leaves the session to its successor.
   */
  public void unregister(DeviceId device, boolean cleanSession, Member connection) {
    if (!active.remove(device, connection)) {
      return;
    }
    if (!cleanSession) {
      SessionState state = persistent.get(device);
      if (state != null) {
        state.expireAt(System.nanoTime() + expiryNanos);
      }
    }
  }

  /**
   * Closes this node's session of {@code device}, if any, because it connected elsewhere in the
   * cluster. Any thread; the close itself happens on the connection's event loop.
   *
   * @return whether a session was open (and is now closing)
   */
  @Override
  public boolean closeSession(DeviceId device) {
    Member connection = active.get(device);
    if (connection == null) {
      return false;
    }
    connection.takeOver();
    return true;
  }

  /** Drops persistent sessions whose expiry has passed; called periodically. */
  public int expire() {
    long now = System.nanoTime();
    int before = persistent.size();
    persistent.values().removeIf(state -> !state.isLiveAt(now));
    return before - persistent.size();
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
