package io.fieldline.transport.mqtt.session;

import io.netty.handler.codec.mqtt.MqttProperties;
import org.jspecify.annotations.Nullable;

/** The MQTT rules for strings that every path checks (MQTT 3.1.1 §1.5.3, MQTT 5 §1.5.4). */
public final class MqttStrings {

  private MqttStrings() {}

  /**
   * Whether {@code text} is well-formed UTF-8 without U+0000; otherwise the packet is malformed and
   * the connection must close. Netty's decoder turns ill-formed UTF-8 into U+FFFD, so a U+FFFD is
   * taken as ill-formed input. Null (an absent string) is fine.
   */
  public static boolean isWellFormed(@Nullable String text) {
    return text == null || (text.indexOf('\u0000') < 0 && text.indexOf('\uFFFD') < 0);
  }

  /**
   * Whether the Response Topic in {@code properties}, if any, is a topic name: not empty, without
   * the wildcards {@code +} and {@code #} (MQTT 5 §3.3.2.3.5: otherwise a Protocol Error, 0x82),
   * well-formed. True when there is none.
   */
  public static boolean isValidResponseTopic(MqttProperties properties) {
    MqttProperties.MqttProperty<?> property = properties.getProperty(MqttProperties.RESPONSE_TOPIC);
    if (property == null) {
      return true;
    }
    String topic = String.valueOf(property.value());
    return !topic.isEmpty()
        && topic.indexOf('+') < 0
        && topic.indexOf('#') < 0
        && isWellFormed(topic);
  }
}
