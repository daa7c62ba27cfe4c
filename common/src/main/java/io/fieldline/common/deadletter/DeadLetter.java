package io.fieldline.common.deadletter;

import io.fieldline.common.DeviceId;
import java.util.Objects;

/**
 * A message that was acknowledged but could not be interpreted; kept raw so nothing is lost.
 *
 * @param deviceId the sender
 * @param receivedAt epoch milliseconds
 * @param topic the MQTT topic it was published to
 * @param reason why it could not be parsed
 * @param payload the raw bytes, exactly as received
 */
public record DeadLetter(
    DeviceId deviceId, long receivedAt, String topic, String reason, byte[] payload) {

  public DeadLetter {
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(payload, "payload");
  }
}
