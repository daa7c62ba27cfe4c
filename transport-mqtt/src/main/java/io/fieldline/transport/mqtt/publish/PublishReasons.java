package io.fieldline.transport.mqtt.publish;

import io.fieldline.transport.mqtt.ack.OrderedAckWindow.Slot;
import io.fieldline.transport.mqtt.session.Negotiated;
import io.netty.handler.codec.mqtt.MqttProperties;
import org.jspecify.annotations.Nullable;

/**
 * The MQTT 5 reason codes a PUBACK or PUBREC carries besides 0x00 (MQTT 5 §3.4.2.1), and their
 * reason strings. Both are for messages that were kept as dead letters — stored, so nothing is
 * lost, but not as telemetry or attributes — and tell the device which of its mistakes it was.
 * Stateless.
 */
final class PublishReasons {

  /** 0x90 Topic Name invalid: the topic is not part of ThingsBoard's device API. */
  static final byte TOPIC_NAME_INVALID = (byte) 0x90;

  /** 0x97 Quota exceeded: a gateway message over a bound of its session. */
  static final byte QUOTA_EXCEEDED = (byte) 0x97;

  /**
   * 0x87 Not authorized: a gateway message naming a device the gateway may not act for (neither
   * created by it nor linked to it).
   */
  static final byte NOT_AUTHORIZED = (byte) 0x87;

  /** 0x99 Payload format invalid: the payload is not ThingsBoard JSON. */
  static final byte PAYLOAD_FORMAT_INVALID = (byte) 0x99;

  // A PUBACK: fixed header 2, packet id 2, reason code 1, property length 1, then the reason
  // string property (identifier 1, length 2, the UTF-8 bytes).
  private static final int PUBACK_WITHOUT_REASON_TEXT = 9;

  private PublishReasons() {}

  /**
   * The properties of the acknowledgement of {@code slot}: a reason string for an error reason
   * code, if the client asked for problem information and the packet stays within its Maximum
   * Packet Size (MQTT 5 §3.4.2.2.2), none otherwise.
   */
  static MqttProperties properties(Slot slot, Negotiated negotiated) {
    String text = text(slot.reasonCode());
    if (text == null
        || !negotiated.problemInformation()
        || !negotiated.clientAccepts(PUBACK_WITHOUT_REASON_TEXT + text.length())) {
      return MqttProperties.NO_PROPERTIES;
    }
    MqttProperties properties = new MqttProperties();
    properties.add(new MqttProperties.StringProperty(MqttProperties.REASON_STRING, text));
    return properties;
  }

  private static @Nullable String text(byte reasonCode) {
    return switch (reasonCode) {
      case QUOTA_EXCEEDED ->
          "gateway message over a bound of its session; message kept as a dead letter";
      case NOT_AUTHORIZED ->
          "gateway message names a device the gateway did not create and is not linked to;"
              + " message kept as a dead letter";
      case TOPIC_NAME_INVALID ->
          "topic is not part of the ThingsBoard device API; message kept as a dead letter";
      case PAYLOAD_FORMAT_INVALID ->
          "payload is not valid ThingsBoard JSON; message kept as a dead letter";
      default -> null;
    };
  }
}
