package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The MQTT warm-up sends its messages through a private listener of the node, acknowledged only
 * once stored, under the warm-up's reserved ids; the node's own MQTT meters do not count it.
 */
class MqttWarmUpIT extends ServerTestBase {

  private static final int MESSAGES = 1_600;

  @Override
  protected Map<String, Object> overrides() {
    // Only the MQTT warm-up: what is stored under the reserved ids came through it.
    return Map.of("fieldline.warm-up.messages", 0, "fieldline.warm-up.mqtt-messages", MESSAGES);
  }

  @Test
  void should_store_the_messages_sent_through_the_private_listener_under_the_reserved_ids() {
    // Connection d (one per reserved id) sent WarmUp's messages d + 16 i, i < 100: 100 distinct
    // timestamps, 4 keys each.
    long perDevice = MESSAGES / WarmUp.DEVICES * 4L;
    for (int i = 0; i < WarmUp.DEVICES; i++) {
      assertThat(rows(WarmUp.device(i))).as("cells of warm-up device %d", i).isEqualTo(perDevice);
    }
    assertThat(metric("fieldline_mqtt_connects_total"))
        .as("the node's listener saw no connection")
        .isZero();
  }
}
