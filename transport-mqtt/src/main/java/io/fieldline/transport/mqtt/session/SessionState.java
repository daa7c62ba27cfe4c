package io.fieldline.transport.mqtt.session;

import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The state of one device's MQTT session, shared by its successive connections: what a
 * CleanSession=0 session keeps for {@code session-expiry} after its connection closes (MQTT 3.1.1
 * §3.1.2.4) — its subscriptions, the QoS 2 packet ids it received and has not seen released, and
 * what it holds for the device on the way down ({@link DownlinkState}). Created, resumed and ended
 * by {@link SessionRegistry}; read and changed by the paths of the connection that holds it.
 *
 * <p>Thread-safe: a connection's event loop changes it while the registry's expiry sweep (another
 * thread) reads its expiry; a later connection of the same device may run on another event loop.
 */
public final class SessionState {

  private final Map<String, Integer> subscriptions = new ConcurrentHashMap<>();
  // In the order the ids were PUBREC'd, so the oldest is forgotten first. Guarded by itself.
  private final Set<Integer> awaitingRelease = Collections.synchronizedSet(new LinkedHashSet<>());
  private final DownlinkState downlink;
  // Created on a gateway's first message; lives as long as the session (its retransmissions).
  private final AtomicReference<@Nullable GatewayTimestamps> gatewayTimestamps =
      new AtomicReference<>();
  // Long.MAX_VALUE while a connection holds the session; set when it closes.
  private volatile long expiresAtNanos = Long.MAX_VALUE;

  /**
   * @param kept whether the session may outlive its connection (then the registry ends it)
   */
  SessionState(boolean kept) {
    this.downlink = new DownlinkState(kept);
  }

  /** Topic filter → granted QoS. */
  public Map<String, Integer> subscriptions() {
    return subscriptions;
  }

  /**
   * What a gateway session remembers of its unacknowledged messages (created on first use with room
   * for {@code max} stamps), so a retransmission is stamped as its first copy was.
   */
  public GatewayTimestamps gatewayTimestamps(int max) {
    GatewayTimestamps existing = gatewayTimestamps.get();
    if (existing != null) {
      return existing;
    }
    // Set once and never reset: the first to set it wins a race, the others get the winner's.
    GatewayTimestamps created = new GatewayTimestamps(max);
    GatewayTimestamps winner = gatewayTimestamps.compareAndExchange(null, created);
    return winner != null ? winner : created;
  }

  /** QoS 2 packet ids answered with PUBREC and not yet released (MQTT 3.1.1 §4.3.3). */
  public Set<Integer> awaitingRelease() {
    return awaitingRelease;
  }

  /**
   * Records that {@code packetId} was answered with PUBREC. If the session then holds more than
   * {@code max} ids, the oldest is forgotten: its PUBREL still gets PUBCOMP, but a redelivery of
   * its PUBLISH would be stored again.
   *
   * @return the forgotten id, or -1
   */
  public int awaitRelease(int packetId, int max) {
    synchronized (awaitingRelease) {
      awaitingRelease.add(packetId);
      if (awaitingRelease.size() <= max) {
        return -1;
      }
      Iterator<Integer> oldest = awaitingRelease.iterator();
      int forgotten = oldest.next();
      oldest.remove();
      return forgotten;
    }
  }

  /** What the session holds for its device on the way down. */
  public DownlinkState downlink() {
    return downlink;
  }

  /** The session is over: what it kept for its device is given up. */
  void end() {
    downlink.end();
  }

  boolean isLiveAt(long nowNanos) {
    return expiresAtNanos - nowNanos > 0;
  }

  void keepWhileConnected() {
    expiresAtNanos = Long.MAX_VALUE;
  }

  void expireAt(long nanos) {
    expiresAtNanos = nanos;
  }
}
