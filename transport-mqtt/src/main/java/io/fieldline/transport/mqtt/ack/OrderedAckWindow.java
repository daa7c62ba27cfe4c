package io.fieldline.transport.mqtt.ack;

import java.util.ArrayDeque;

/**
 * The per-connection window of PUBLISHes received but not yet answered, kept in arrival order.
 *
 * <p>MQTT 3.1.1 §4.6 requires acknowledgements in the order the PUBLISHes arrived, while storage
 * writes complete in any order. Each PUBLISH takes a {@link Slot}; when its outcome is known the
 * slot is marked; {@link #drain} then emits acknowledgements for every leading completed slot and
 * stops at the first one still pending. A failed slot is reported when it reaches the head, after
 * every earlier PUBLISH has been acknowledged, so a failure costs as few retransmissions as
 * possible.
 *
 * <p>Confined to the channel's event loop; not thread-safe.
 */
public final class OrderedAckWindow {

  /** Which acknowledgement a slot produces (MQTT 3.1.1 §4.3). */
  public enum AckType {
    /** QoS 0: nothing is sent, but the slot still bounds the work in flight. */
    NONE,
    /** QoS 1: PUBACK. */
    PUBACK,
    /** QoS 2: PUBREC (then PUBREL/PUBCOMP). */
    PUBREC
  }

  /** Receives what {@link #drain} decides; called on the event loop. */
  public interface Sink {
    /** Acknowledge one stored PUBLISH (not called for {@link AckType#NONE}). */
    void acknowledge(Slot slot);

    /** The head slot failed: every earlier slot has been acknowledged; close the connection. */
    void failed(Slot slot);
  }

  /** One PUBLISH in the window. */
  public static final class Slot {
    private final int packetId;
    private final AckType ackType;
    private final long receivedNanos;
    private byte state; // 0 pending, 1 done, 2 failed

    Slot(int packetId, AckType ackType, long receivedNanos) {
      this.packetId = packetId;
      this.ackType = ackType;
      this.receivedNanos = receivedNanos;
    }

    public int packetId() {
      return packetId;
    }

    public AckType ackType() {
      return ackType;
    }

    public long receivedNanos() {
      return receivedNanos;
    }

    public boolean isPending() {
      return state == 0;
    }
  }

  private final ArrayDeque<Slot> slots = new ArrayDeque<>();

  /** Adds a PUBLISH at the tail of the window. */
  public Slot register(int packetId, AckType ackType, long receivedNanos) {
    Slot slot = new Slot(packetId, ackType, receivedNanos);
    slots.addLast(slot);
    return slot;
  }

  /** Marks a slot stored. Call {@link #drain} afterwards. */
  public void complete(Slot slot) {
    if (slot.state == 0) {
      slot.state = 1;
    }
  }

  /** Marks a slot failed. Call {@link #drain} afterwards. */
  public void fail(Slot slot) {
    if (slot.state == 0) {
      slot.state = 2;
    }
  }

  /**
   * Emits acknowledgements for the leading completed slots, in order.
   *
   * @return true if anything left the window
   */
  public boolean drain(Sink sink) {
    boolean progressed = false;
    Slot head;
    while ((head = slots.peekFirst()) != null && head.state != 0) {
      if (head.state == 2) {
        sink.failed(head);
        return progressed;
      }
      slots.pollFirst();
      progressed = true;
      if (head.ackType != AckType.NONE) {
        sink.acknowledge(head);
      }
    }
    return progressed;
  }

  /**
   * PUBLISHes received and not yet acknowledged (pending, completed behind a pending one, or
   * failed).
   */
  public int size() {
    return slots.size();
  }

  public boolean isEmpty() {
    return slots.isEmpty();
  }
}
