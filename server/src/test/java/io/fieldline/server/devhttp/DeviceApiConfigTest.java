package io.fieldline.server.devhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.fieldline.transport.mqtt.MqttTransportConfig.InvalidPayloadPolicy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DeviceApiConfigTest {

  private static DeviceApiConfig read(String hocon) {
    return DeviceApiConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load()).resolve());
  }

  @Test
  void should_share_the_mqtt_bounds_when_read_with_the_defaults() {
    DeviceApiConfig config = read("");

    assertThat(config.enabled()).isTrue();
    assertThat(config.maxBodyBytes()).isEqualTo(65536);
    assertThat(config.maxWritesPerDevice()).isEqualTo(100);
    assertThat(config.invalidPayload()).isEqualTo(InvalidPayloadPolicy.DEAD_LETTER);
    assertThat(config.defaultPollTimeout()).isEqualTo(Duration.ofSeconds(55));
    assertThat(read("fieldline.mqtt.max-packet-size = 1000").maxBodyBytes()).isEqualTo(1000);
  }

  @Test
  void should_clamp_the_wait_when_a_poll_asks_for_more_than_the_maximum() {
    DeviceApiConfig config =
        read(
            "fieldline.http-device.max-poll-timeout = 20 s\n"
                + "fieldline.http-device.default-poll-timeout = 10 s");

    assertThat(config.pollTimeout(0)).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.pollTimeout(1500)).isEqualTo(Duration.ofMillis(1500));
    assertThat(config.pollTimeout(3_600_000)).isEqualTo(Duration.ofSeconds(20));
    assertThatThrownBy(() -> config.pollTimeout(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_refuse_to_start_when_a_poll_could_outlive_the_idle_timeout() {
    assertThatThrownBy(() -> read("fieldline.http-device.max-poll-timeout = 58 s"))
        .hasMessageContaining("max-poll-timeout");
    assertThatThrownBy(() -> read("fieldline.http-device.default-poll-timeout = 56 s"))
        .hasMessageContaining("default-poll-timeout");
  }
}
