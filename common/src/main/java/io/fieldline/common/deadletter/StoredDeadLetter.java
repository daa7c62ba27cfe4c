package io.fieldline.common.deadletter;

import io.fieldline.common.DeviceId;
import java.util.Objects;
import java.util.UUID;

/**
 * A dead letter as read back from storage by {@link DeadLetterQueries}: the {@link DeadLetter} that
 * was written, with the id storage gave it.
 *
 * @param id its time-based UUID (orders dead letters of a device, newest first)
 * @param deviceId the sender
 * @param receivedAt epoch milliseconds at which the transport received it
 * @param topic the MQTT topic it was published to
 * @param reason why it could not be parsed
 * @param payload the raw bytes
 */
public record StoredDeadLetter(
    UUID id, DeviceId deviceId, long receivedAt, String topic, String reason, byte[] payload) {

  public StoredDeadLetter {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(payload, "payload");
  }
}
