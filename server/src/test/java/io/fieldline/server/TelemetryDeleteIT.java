package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * ThingsBoard's {@code DELETE …/timeseries/delete} against a real server and Cassandra: values a
 * real MQTT device stored are deleted in {@code [startTs, endTs)} or all of them, and the latest
 * value is rewritten to the newest remaining one or dropped.
 */
class TelemetryDeleteIT extends RestTestBase {

  @Test
  void should_delete_from_start_inclusive_to_end_exclusive_and_keep_the_rest() {
    String base = deviceWithTenValues("tsdel-range");

    ok(delete(base + "/timeseries/delete?keys=t&startTs=1200&endTs=1500"));

    assertThat(history(base, "t")).containsExactly(1900L, 1800L, 1700L, 1600L, 1500L, 1100L, 1000L);
    assertThat(history(base, "h")).hasSize(10);
    assertThat(latest(base).at("/t/0/ts").asLong()).isEqualTo(1900);
  }

  @Test
  void should_rewrite_the_latest_value_to_the_newest_remaining_one_when_asked() {
    String base = deviceWithTenValues("tsdel-rewrite");

    ok(
        delete(
            base
                + "/timeseries/delete?keys=t&startTs=1800&endTs=2000&rewriteLatestIfDeleted=true"));

    JsonNode latest = latest(base);
    assertThat(latest.at("/t/0/ts").asLong()).isEqualTo(1700);
    assertThat(latest.at("/t/0/value").asText()).isEqualTo("7");
  }

  @Test
  void should_drop_the_latest_value_when_it_is_deleted_without_rewrite() {
    String base = deviceWithTenValues("tsdel-norewrite");

    ok(delete(base + "/timeseries/delete?keys=t&startTs=1900&endTs=1901"));

    assertThat(latest(base).has("t")).isFalse();
    assertThat(latest(base).at("/h/0/ts").asLong()).isEqualTo(1900);
    assertThat(history(base, "t")).hasSize(9);
  }

  @Test
  void should_delete_every_value_of_the_keys_when_delete_all_data_for_keys_is_true() {
    String base = deviceWithTenValues("tsdel-all");

    ok(delete(base + "/timeseries/delete?keys=t,h&deleteAllDataForKeys=true"));

    assertThat(history(base, "t")).isEmpty();
    assertThat(history(base, "h")).isEmpty();
    assertThat(latest(base).has("t")).isFalse();
    assertThat(latest(base).has("h")).isFalse();
  }

  @Test
  void should_refuse_a_delete_without_range_keys_or_known_device() {
    String base = deviceWithTenValues("tsdel-refused");

    assertError(delete(base + "/timeseries/delete?keys=t"), 400);
    assertError(delete(base + "/timeseries/delete?startTs=0&endTs=5000"), 400);
    assertError(delete(base + "/timeseries/delete?keys=t&startTs=2000&endTs=1000"), 400);
    assertError(
        delete(
            "/api/plugins/telemetry/DEVICE/"
                + DeviceId.random()
                + "/timeseries/delete?keys=t&deleteAllDataForKeys=true"),
        404);
    assertThat(history(base, "t")).hasSize(10);
  }

  /** A device with t = 0..9 and h = 100..109 at ts 1000, 1100, ..., 1900; its REST base path. */
  private String deviceWithTenValues(String name) {
    Device device = createDevice(name, name + "-token");
    Mqtt3BlockingClient client = client(name);
    client.connectWith().simpleAuth().username(name + "-token").applySimpleAuth().send();
    try {
      StringBuilder payload = new StringBuilder("[");
      for (int i = 0; i < 10; i++) {
        payload
            .append(i == 0 ? "" : ",")
            .append("{\"ts\":")
            .append(1000 + i * 100)
            .append(",\"values\":{\"t\":")
            .append(i)
            .append(",\"h\":")
            .append(100 + i)
            .append("}}");
      }
      publish(client, "v1/devices/me/telemetry", payload.append("]").toString());
    } finally {
      client.disconnect();
    }
    return "/api/plugins/telemetry/DEVICE/" + device.id();
  }

  private List<Long> history(String base, String key) {
    JsonNode values =
        ok(get(base + "/values/timeseries?keys=" + key + "&startTs=0&endTs=100000&limit=100"));
    List<Long> ts = new ArrayList<>();
    values.path(key).forEach(point -> ts.add(point.get("ts").asLong()));
    return ts;
  }

  private JsonNode latest(String base) {
    return ok(get(base + "/values/timeseries?keys=t,h"));
  }
}
