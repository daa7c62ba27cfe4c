package io.fieldline.transport.common.payload;

/**
 * The reaction to an unparseable telemetry or attributes payload ({@code
 * fieldline.mqtt.invalid-payload}), the same for both device transports: over MQTT the PUBACK or
 * the closed connection, over HTTP the 200 or the 400.
 */
public enum InvalidPayloadPolicy {
  /** Acknowledge, and keep the raw bytes in the dead-letter table (the default). */
  DEAD_LETTER,
  /**
   * Refuse: MQTT closes the connection without PUBACK, as ThingsBoard 2.x does; HTTP answers 400.
   */
  CLOSE
}
