package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
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
    // Below the minimum: raised to it, so that a device cannot poll in a tight loop.
    assertThat(config.pollTimeout(1)).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.pollTimeout(999)).isEqualTo(Duration.ofSeconds(1));
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

  @Test
  void should_refuse_to_start_when_the_minimum_poll_timeout_exceeds_the_default() {
    assertThatThrownBy(() -> read("fieldline.http-device.min-poll-timeout = 56 s"))
        .hasMessageContaining("min-poll-timeout");
  }

  @Test
  void should_leave_connections_for_the_rest_when_every_long_poll_waits_with_the_defaults() {
    Config defaults = ConfigFactory.load();

    int maxConnections = defaults.getInt("pekko.http.server.max-connections");

    assertThat(maxConnections).isEqualTo(4096);
    assertThat(read("").maxPolls() + DeviceApiConfig.CONNECTION_HEADROOM)
        .isLessThanOrEqualTo(maxConnections);
  }

  @Test
  void should_refuse_to_start_when_the_long_polls_could_take_every_http_connection() {
    assertThatThrownBy(() -> read("fieldline.http-device.max-polls = 4000"))
        .hasMessageContaining("max-polls")
        .hasMessageContaining("pekko.http.server.max-connections");
    assertThatThrownBy(
            () ->
                read(
                    "pekko.http.server.max-connections = 1000\n"
                        + "fieldline.http-device.max-polls = 800"))
        .hasMessageContaining("max-polls");
    assertThat(
            read("pekko.http.server.max-connections = 1100\n"
                    + "fieldline.http-device.max-polls = 800")
                .maxPolls())
        .isEqualTo(800);
  }
}
