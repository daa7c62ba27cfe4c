package io.fieldline.transport.common.bounds;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import io.fieldline.transport.common.payload.InvalidPayloadPolicy;
import org.junit.jupiter.api.Test;

class DeviceBoundsConfigTest {

  private static DeviceBoundsConfig read(String hocon) {
    return DeviceBoundsConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  @Test
  void should_read_the_documented_defaults_when_nothing_is_set() {
    assertThat(read(""))
        .isEqualTo(
            new DeviceBoundsConfig(
                65536, 100, 10, 20, 10, 20, 100, InvalidPayloadPolicy.DEAD_LETTER));
  }

  @Test
  void should_read_the_mqtt_keys_when_they_are_set() {
    DeviceBoundsConfig config =
        read(
            "fieldline.mqtt { max-packet-size = 1 KiB, max-inflight = 7, client-rpc-rate = 0,"
                + " attribute-request-burst = 3, downlink.max-pending-rpc = 5,"
                + " invalid-payload = close }");

    assertThat(config.maxPacketSize()).isEqualTo(1024);
    assertThat(config.maxInflight()).isEqualTo(7);
    assertThat(config.clientRpcRate()).isZero();
    assertThat(config.attributeRequestBurst()).isEqualTo(3);
    assertThat(config.maxPendingRpc()).isEqualTo(5);
    assertThat(config.invalidPayload()).isEqualTo(InvalidPayloadPolicy.CLOSE);
  }

  @Test
  void should_list_every_invalid_key_when_several_are_wrong() {
    assertThatThrownBy(() -> read("fieldline.mqtt { max-packet-size = 10, max-inflight = 0 }"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("fieldline.mqtt.max-packet-size")
        .hasMessageContaining("fieldline.mqtt.max-inflight");
  }
}
