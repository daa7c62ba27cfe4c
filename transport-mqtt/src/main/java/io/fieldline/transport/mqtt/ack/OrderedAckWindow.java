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
    private byte reasonCode; // MQTT 5 PUBACK / PUBREC reason code; 0x00 success

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

    /**
     * The reason code the acknowledgement carries to an MQTT 5 client (MQTT 5 §3.4.2.1): 0x00
     * (success) unless the publish path set another, e.g. 0x99 for a payload kept as a dead letter.
     * MQTT 3.1.1 acknowledgements have no reason code.
     */
    public byte reasonCode() {
      return reasonCode;
    }

    /** Sets the reason code the acknowledgement will carry (see {@link #reasonCode()}). */
    public void reasonCode(byte code) {
      reasonCode = code;
    }
  }

  private final ArrayDeque<Slot> slots = new ArrayDeque<>();
  private int acknowledgeable;

  /** Adds a PUBLISH at the tail of the window. */
  public Slot register(int packetId, AckType ackType, long receivedNanos) {
    Slot slot = new Slot(packetId, ackType, receivedNanos);
    slots.addLast(slot);
    if (ackType != AckType.NONE) {
      acknowledgeable++;
    }
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
        acknowledgeable--;
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

  /** QoS 1 and 2 PUBLISHes in the window: what counts against an MQTT 5 Receive Maximum. */
  public int acknowledgeable() {
    return acknowledgeable;
  }

  public boolean isEmpty() {
    return slots.isEmpty();
  }
}
