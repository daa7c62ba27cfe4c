package io.fieldline.transport.mqtt.testkit;

import com.typesafe.config.ConfigFactory;
import io.fieldline.transport.common.firmware.FirmwareConfig;
import io.fieldline.transport.mqtt.MqttTransportConfig;

/** Transport configs for tests: HOCON overrides on top of the module's reference.conf. */
public final class TestConfigs {

  private TestConfigs() {}

  /** {@code overrides} are keys under {@code fieldline.mqtt}, e.g. {@code "max-inflight = 4"}. */
  public static MqttTransportConfig mqtt(String... overrides) {
    String hocon =
        "fieldline.mqtt {\n port = 0\n host = \"127.0.0.1\"\n"
            + String.join("\n", overrides)
            + "\n}";
    return MqttTransportConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  /**
   * {@code overrides} are keys under {@code fieldline.mqtt.firmware}, e.g. {@code "max-reads = 1"}.
   */
  public static FirmwareConfig firmware(String... overrides) {
    String hocon = "fieldline.mqtt.firmware {\n" + String.join("\n", overrides) + "\n}";
    return FirmwareConfig.from(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }
}
