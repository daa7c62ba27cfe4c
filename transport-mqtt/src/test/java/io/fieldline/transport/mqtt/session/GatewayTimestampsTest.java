package io.fieldline.transport.mqtt.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class GatewayTimestampsTest {

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void should_give_the_first_stamp_again_when_a_dup_copy_has_the_same_id_and_payload() {
    GatewayTimestamps timestamps = new GatewayTimestamps(10);

    assertThat(timestamps.stamp(1, false, bytes("{\"A\":{}}"), 100))
        .isEqualTo(new GatewayTimestamps.Stamp(100, false));
    assertThat(timestamps.stamp(1, true, bytes("{\"A\":{}}"), 200))
        .isEqualTo(new GatewayTimestamps.Stamp(100, true));
  }

  @Test
  void should_stamp_anew_when_the_copy_is_not_dup_or_its_payload_differs() {
    GatewayTimestamps timestamps = new GatewayTimestamps(10);
    timestamps.stamp(1, false, bytes("{\"A\":{}}"), 100);

    assertThat(timestamps.stamp(1, true, bytes("{\"B\":{}}"), 200).receivedAt()).isEqualTo(200);
    assertThat(timestamps.stamp(1, false, bytes("{\"B\":{}}"), 300).receivedAt()).isEqualTo(300);
    assertThat(timestamps.stamp(1, true, bytes("{\"B\":{}}"), 400).receivedAt()).isEqualTo(300);
  }

  @Test
  void should_stamp_anew_when_the_message_was_acknowledged() {
    GatewayTimestamps timestamps = new GatewayTimestamps(10);
    timestamps.stamp(1, false, bytes("{}"), 100);

    timestamps.forget(1);

    assertThat(timestamps.stamp(1, true, bytes("{}"), 200).receivedAt()).isEqualTo(200);
  }

  @Test
  void should_forget_the_oldest_stamp_when_more_than_max_are_unacknowledged() {
    GatewayTimestamps timestamps = new GatewayTimestamps(2);
    timestamps.stamp(1, false, bytes("{}"), 100);
    timestamps.stamp(2, false, bytes("{}"), 101);
    timestamps.stamp(3, false, bytes("{}"), 102);

    assertThat(timestamps.size()).isEqualTo(2);
    assertThat(timestamps.stamp(1, true, bytes("{}"), 200).reused()).isFalse();
    assertThat(timestamps.stamp(3, true, bytes("{}"), 201).receivedAt()).isEqualTo(102);
  }
}
