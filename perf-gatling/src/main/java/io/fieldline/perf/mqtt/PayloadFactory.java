package io.fieldline.perf.mqtt;

/**
 * Builds the payload of one PUBLISH. Called on the user's event loop for every message, so it must
 * be cheap and must not block.
 */
@FunctionalInterface
public interface PayloadFactory {

  byte[] payload(MessageContext message);

  /**
   * The message built from {@code message} was acknowledged (QoS 1 PUBACK, or written for QoS 0) at
   * {@code ackClockMillis} on Gatling's clock. Called on the connection's event loop; nothing by
   * default.
   */
  default void acked(MessageContext message, long ackClockMillis) {}
}
