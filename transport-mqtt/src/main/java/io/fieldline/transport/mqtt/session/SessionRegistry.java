package io.fieldline.transport.mqtt.session;

import io.fieldline.common.DeviceId;
import io.fieldline.common.SessionTakeover;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One MQTT session per device on this node, and the state that CleanSession=0 sessions keep between
 * connections.
 *
 * <p>A second CONNECT for the same device takes over: the older connection is closed (ThingsBoard's
 * one-session-per-device rule). The state of a persistent session (granted subscriptions and QoS 2
 * packet ids awaiting PUBREL) survives its connection for {@code session-expiry}; a reconnect
 * within that time gets session-present = 1 (MQTT 3.1.1 §3.2.2.2), which is what makes clients
 * retransmit their unacknowledged PUBLISHes. State is in memory: it does not survive a restart of
 * this node, and then clients simply see session-present = 0.
 *
 * <p>Thread-safe: called from every event loop.
 */
public final class SessionRegistry {

  /** The side of a connection the registry can act on. */
  public interface Connection {
    /** Close this connection because another one took over its device. Any thread. */
    void takeOver();
  }

  /** State of a session, shared by its successive connections. Thread-safe collections. */
  public static final class SessionState {
    private final Map<String, Integer> subscriptions = new ConcurrentHashMap<>();
    private final Set<Integer> awaitingRelease = ConcurrentHashMap.newKeySet();
    private volatile long expiresAtNanos = Long.MAX_VALUE;

    /** Topic filter → granted QoS. */
    public Map<String, Integer> subscriptions() {
      return subscriptions;
    }

    /** QoS 2 packet ids answered with PUBREC and not yet released (MQTT 3.1.1 §4.3.3). */
    public Set<Integer> awaitingRelease() {
      return awaitingRelease;
    }
  }

  /**
   * The outcome of registering a connection.
   *
   * @param state the session's state, new or resumed
   * @param sessionPresent whether {@code state} was resumed
   */
  public record Registration(SessionState state, boolean sessionPresent) {}

  private final Map<DeviceId, Connection> active = new ConcurrentHashMap<>();
  private final Map<DeviceId, SessionState> persistent = new ConcurrentHashMap<>();
  private final long expiryNanos;
  private final SessionTakeover takeover;

  /** A registry for a single node. */
  public SessionRegistry(Duration sessionExpiry) {
    this(sessionExpiry, SessionTakeover.LOCAL_ONLY);
  }

  /**
   * @param takeover told of every accepted session, so that other nodes of a cluster close their
   *     sessions of the same device
   */
  public SessionRegistry(Duration sessionExpiry, SessionTakeover takeover) {
    this.expiryNanos = sessionExpiry.toNanos();
    this.takeover = takeover;
  }

  /** Registers a newly authenticated connection, closing any older one of the same device. */
  public Registration register(DeviceId device, boolean cleanSession, Connection connection) {
    Connection previous = active.put(device, connection);
    if (previous != null && previous != connection) {
      previous.takeOver();
    }
    takeover.sessionOpened(device);
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
              if (existing != null && existing.expiresAtNanos - now > 0) {
                resumed[0] = existing;
                existing.expiresAtNanos = Long.MAX_VALUE;
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
  public void unregister(DeviceId device, boolean cleanSession, Connection connection) {
    if (!active.remove(device, connection)) {
      return;
    }
    if (!cleanSession) {
      SessionState state = persistent.get(device);
      if (state != null) {
        state.expiresAtNanos = System.nanoTime() + expiryNanos;
      }
    }
  }

  /**
   * Closes this node's session of {@code device}, if any, because it connected elsewhere in the
   * cluster. Any thread.
   *
   * @return whether a session was closed
   */
  public boolean closeSession(DeviceId device) {
    Connection connection = active.get(device);
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
    persistent.values().removeIf(state -> state.expiresAtNanos - now <= 0);
    return before - persistent.size();
  }

  public int activeSessions() {
    return active.size();
  }

  public int persistentSessions() {
    return persistent.size();
  }
}
