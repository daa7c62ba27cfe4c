package io.fieldline.perf.simulations;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class GatewaySettingsTest {

  @Test
  void should_accept_a_message_that_fits_the_servers_packet_size() {
    List<String> errors = new ArrayList<>();

    assertThat(new GatewaySettings(100, 65_536).fits(12_000, errors)).isTrue();
    assertThat(errors).isEmpty();
  }

  @Test
  void should_refuse_a_message_over_the_packet_size_counting_the_topic() {
    List<String> errors = new ArrayList<>();
    int fitsExactly = 65_536 - GatewaySettings.PUBLISH_OVERHEAD;

    assertThat(new GatewaySettings(600, 65_536).fits(fitsExactly, errors)).isTrue();
    assertThat(new GatewaySettings(600, 65_536).fits(fitsExactly + 1, errors)).isFalse();
    assertThat(errors).hasSize(1);
    assertThat(errors.get(0)).contains("600 points", "65536", "fieldline.mqtt.max-packet-size");
  }

  @Test
  void should_read_the_defaults_when_no_property_is_set() {
    GatewaySettings settings = GatewaySettings.fromSystemProperties();

    assertThat(settings.children()).isEqualTo(100);
    assertThat(settings.maxPacketSize()).isEqualTo(65_536);
    assertThat(settings.describe()).containsEntry("children", 100);
  }
}
