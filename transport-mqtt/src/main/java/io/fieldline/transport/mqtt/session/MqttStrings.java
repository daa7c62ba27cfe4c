package io.fieldline.transport.mqtt.session;

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
}
