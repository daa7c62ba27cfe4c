package io.fieldline.common.kv;

import java.util.Objects;

/**
 * The outcome of submitting a {@link DeviceMessage}. Only {@link Stored} may turn into a PUBACK: a
 * rejected message is never acknowledged as a success.
 */
public sealed interface Ack {

  /** Every row of the message has been written with the configured consistency. */
  record Stored() implements Ack {}

  /**
   * The message was not stored.
   *
   * @param reason why, from a closed set (metrics are tagged with it)
   * @param detail a human-readable explanation for logs
   */
  record Rejected(Reason reason, String detail) implements Ack {
    public Rejected {
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(detail, "detail");
    }
  }

  /** Why a message was not stored. */
  enum Reason {
    /** The storage write failed or timed out. */
    WRITE_FAILED,
    /** A bound (device in-flight writes, storage permits) was exceeded. */
    OVERLOADED,
    /** The device is unknown or was deleted. */
    UNKNOWN_DEVICE,
    /** The node is shutting down or does not own the device any more. */
    UNAVAILABLE
  }

  Ack STORED = new Stored();

  static Ack stored() {
    return STORED;
  }

  static Ack rejected(Reason reason, String detail) {
    return new Rejected(reason, detail);
  }

  default boolean isStored() {
    return this instanceof Stored;
  }
}
