package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.device.Device;
import java.nio.charset.StandardCharsets;

/**
 * A well-behaved device that publishes QoS 1 beside a test's bad input, through a real client: each
 * message must be acknowledged, and every acknowledged message stored. One per test class; it
 * connects for each test and its message count runs across them.
 */
final class Bystander {

  private static final String TOPIC = "v1/devices/me/telemetry";

  private final ServerTestBase test;
  private final Device device;
  private final String token;
  private Mqtt3BlockingClient client;
  private long acknowledged;

  Bystander(ServerTestBase test, String name) {
    this.test = test;
    this.token = name + "-token";
    this.device = test.createDevice(name, token);
  }

  /** The device's access token. */
  String token() {
    return token;
  }

  void connect() {
    client = test.client(device.name());
    client.connectWith().simpleAuth().username(token).applySimpleAuth().send();
  }

  /** One QoS 1 message: acknowledged (send returns), then every acknowledged one is stored. */
  void publishesAndAllStored() {
    client
        .publishWith()
        .topic(TOPIC)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(
            ("{\"ts\":" + (1_700_000_000_000L + acknowledged) + ",\"values\":{\"ok\":1}}")
                .getBytes(StandardCharsets.UTF_8))
        .send();
    acknowledged++;
    assertThat(test.rows(device)).isEqualTo(acknowledged);
  }

  void disconnect() {
    client.disconnect();
  }
}
