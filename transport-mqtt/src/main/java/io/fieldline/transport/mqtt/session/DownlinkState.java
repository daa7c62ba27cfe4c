package io.fieldline.transport.mqtt.session;

import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttMetrics.DownlinkOutcome;
import io.fieldline.transport.mqtt.MqttMetrics.RpcOutcome;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * What a session holds for its device on the way down (MQTT 3.1.1 §3.1.2.4, MQTT 5 §4.1: the QoS 1
 * messages sent and not yet acknowledged, and those pending transmission), shared by the session's
 * successive connections.
 *
 * <ul>
 *   <li><b>The bound.</b> Every message from the moment it is taken until it is acknowledged (QoS
 *       1), written (QoS 0) or given up counts against {@code downlink.max-queued} and {@code
 *       downlink.max-queued-bytes} ({@link #tryHold}); an event that does not fit is not taken.
 *   <li><b>The hand-over.</b> While a connection holds the session ({@link #attach}) its messages
 *       live in that connection. When it closes ({@link #detach}) a kept session stores its QoS 1
 *       messages for the next connection; anything else is given up — an RPC reported undelivered.
 *       If a newer connection of the same session attached meanwhile (a takeover racing the close),
 *       the messages go straight to it.
 *   <li><b>Server-side RPCs</b> taken and not yet ended, by the {@code n} of their topic ({@link
 *       #track}), bounded by {@code downlink.max-pending-rpc}; an answer after a reconnect still
 *       finds its request.
 *   <li><b>Ids.</b> The counters of packet ids and RPC request ids, so that a resumed session never
 *       reuses an id its client may still hold.
 * </ul>
 *
 * <p>Thread-safe: offered events arrive on any thread, the holder works on its event loop, and the
 * session registry ends a session from its own threads. Callbacks run outside the lock.
 */
public final class DownlinkState {

  /** The connection that holds the session's downlink. */
  public interface Holder {
    /** Takes messages an older connection of the same session left behind. Any thread. */
    void adopt(List<DownlinkMessage> messages);
  }

  private static final int MAX_PACKET_ID = 65535;

  private final boolean kept;
  private final AtomicInteger lastPacketId = new AtomicInteger();
  private final AtomicInteger lastRequestId = new AtomicInteger();
  private final Map<Integer, RpcDelivery> rpcs = new ConcurrentHashMap<>();
  // Guarded by this.
  private final List<DownlinkMessage> stored = new ArrayList<>();
  private int heldCount;
  private long heldBytes;
  private @Nullable Holder holder;
  private boolean ended;
  private @Nullable MqttMetrics metrics;

  /**
   * @param kept whether the session outlives its connection (messages are stored on detach)
   */
  DownlinkState(boolean kept) {
    this.kept = kept;
  }

  /** A packet id for a new QoS 1 message: 1..65535, in turn. */
  public int nextPacketId() {
    return lastPacketId.updateAndGet(id -> id >= MAX_PACKET_ID ? 1 : id + 1);
  }

  /** The {@code n} of a new server-side RPC request: a positive int, in turn. */
  public int nextRequestId() {
    return lastRequestId.updateAndGet(id -> id == Integer.MAX_VALUE ? 1 : id + 1);
  }

  /** Counts {@code message} against the session's bound, if it fits and the session goes on. */
  public synchronized boolean tryHold(DownlinkMessage message, int maxCount, long maxBytes) {
    if (ended || heldCount >= maxCount || heldBytes + message.heldBytes() > maxBytes) {
      return false;
    }
    heldCount++;
    heldBytes += message.heldBytes();
    MqttMetrics current = metrics;
    if (current != null) {
      current.held(1, message.heldBytes());
    }
    return true;
  }

  /** {@code message} left the session (acknowledged, written at QoS 0 or given up). */
  public synchronized void release(DownlinkMessage message) {
    heldCount--;
    heldBytes -= message.heldBytes();
    MqttMetrics current = metrics;
    if (current != null) {
      current.held(-1, -message.heldBytes());
    }
  }

  /** Messages the session holds now, wherever they are. */
  public synchronized int heldCount() {
    return heldCount;
  }

  /** Tracks a server-side RPC until it ends, if fewer than {@code max} are tracked. */
  public synchronized boolean track(RpcDelivery delivery, int max) {
    if (ended || rpcs.size() >= max) {
      return false;
    }
    rpcs.put(delivery.requestId(), delivery);
    return true;
  }

  /** Stops tracking the RPC {@code n} and returns it, or null if none is tracked. */
  public @Nullable RpcDelivery untrack(int requestId) {
    return rpcs.remove(requestId);
  }

  /** Stops tracking {@code delivery} (if it is still the one tracked under its id). */
  public void untrack(RpcDelivery delivery) {
    rpcs.remove(delivery.requestId(), delivery);
  }

  /** The RPCs tracked now (a live view). */
  public Collection<RpcDelivery> tracked() {
    return rpcs.values();
  }

  /**
   * {@code holder} now holds the session's downlink.
   *
   * @param meters where the session counts what it holds and gives up from now on
   * @return the messages a previous connection left, oldest first, for {@code holder} to send
   */
  public synchronized List<DownlinkMessage> attach(Holder holder, MqttMetrics meters) {
    this.holder = holder;
    this.metrics = meters;
    List<DownlinkMessage> left = List.copyOf(stored);
    stored.clear();
    return left;
  }

  /**
   * {@code holder}'s connection closed with {@code held} (oldest first). A newer holder of the
   * session takes them; otherwise a kept session stores the QoS 1 messages until the next
   * connection, and the rest is given up ({@link DownlinkOutcome#DISCARDED}). Also where a message
   * offered after the close ends up.
   */
  public void detach(Holder holder, List<DownlinkMessage> held) {
    Holder successor = null;
    List<DownlinkMessage> lost = new ArrayList<>();
    boolean keeps;
    synchronized (this) {
      keeps = kept && !ended;
      if (this.holder != null && this.holder != holder) {
        successor = this.holder;
      } else {
        this.holder = null;
        for (DownlinkMessage message : held) {
          if (keeps && message.qos() == 1) {
            stored.add(message);
          } else {
            lost.add(message);
          }
        }
      }
    }
    if (successor != null) {
      successor.adopt(held);
      return;
    }
    giveUp(lost, "the connection closed before it was delivered");
    if (!keeps) {
      forgetRpcs();
    }
  }

  /** The session ended (expired, replaced by a clean start, or closed unkept): nothing is kept. */
  void end() {
    List<DownlinkMessage> lost;
    synchronized (this) {
      ended = true;
      lost = new ArrayList<>(stored);
      stored.clear();
    }
    giveUp(lost, "the session ended before it was delivered");
    forgetRpcs();
  }

  /**
   * Gives one held message up: it leaves the bound, is counted as {@code outcome}, and an RPC is
   * reported undelivered with {@code reason}.
   */
  public void giveUp(DownlinkMessage message, DownlinkOutcome outcome, String reason) {
    release(message);
    MqttMetrics current = metrics;
    if (current != null) {
      current.downlink(outcome);
    }
    RpcDelivery rpc = message.rpc();
    if (rpc != null) {
      untrack(rpc);
      if (rpc.giveUp(reason) && current != null) {
        current.rpc(RpcOutcome.UNDELIVERED);
      }
    }
  }

  private void giveUp(List<DownlinkMessage> lost, String reason) {
    for (DownlinkMessage message : lost) {
      giveUp(message, DownlinkOutcome.DISCARDED, reason);
    }
  }

  // Requests delivered and awaiting their answer end silently: the caller's own timeout answers.
  // Undelivered ones are reported with their message, wherever it is.
  private void forgetRpcs() {
    rpcs.values()
        .removeIf(
            rpc -> {
              if (rpc.isDelivered()) {
                rpc.settle();
              }
              return true;
            });
  }
}
