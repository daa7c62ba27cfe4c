package io.fieldline.transport.common.firmware;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

class FirmwareConfigTest {

  private static FirmwareConfig read(String hocon) {
    return FirmwareConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  @Test
  void should_read_the_documented_defaults_when_nothing_is_set() {
    assertThat(read("")).isEqualTo(new FirmwareConfig(16 * 1024, 64 * 1024, 50, 10, 4));
  }

  @Test
  void should_list_every_error_when_the_bounds_are_inconsistent() {
    assertThatThrownBy(
            () ->
                read(
                    "fieldline.mqtt.firmware { max-chunk-size = 128 KiB, default-chunk-size ="
                        + " 32 KiB, max-reads = 0 }"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fieldline.mqtt.firmware.max-chunk-size")
        .hasMessageContaining("fieldline.mqtt.firmware.max-reads");
    assertThatThrownBy(
            () ->
                read(
                    "fieldline.mqtt.firmware { max-chunk-size = 8 KiB, default-chunk-size = 16"
                        + " KiB }"))
        .hasMessageContaining("default-chunk-size: must be at most max-chunk-size");
  }
}
