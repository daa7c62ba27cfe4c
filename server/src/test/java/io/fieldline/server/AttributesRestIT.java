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
 * ThingsBoard's attribute REST API against a real server and Cassandra: save in the two server-side
 * scopes, read, keys and delete in all three (client attributes come from a real MQTT device),
 * typed values, and the refused calls.
 */
class AttributesRestIT extends RestTestBase {

  @Test
  void should_store_and_read_back_typed_values_in_shared_and_server_scope() {
    Device device = createDevice("attr-typed");
    String base = "/api/plugins/telemetry/DEVICE/" + device.id();
    long before = System.currentTimeMillis();

    ok(
        post(
            base + "/attributes/SHARED_SCOPE",
            "{\"n\":42,\"d\":21.5,\"b\":true,\"s\":\"1.10\",\"j\":{\"a\":[1,\"x\"]}}"));
    ok(post(base + "/SERVER_SCOPE", "{\"limit\":-7,\"note\":\"server side\"}"));
    long after = System.currentTimeMillis();

    JsonNode shared = ok(get(base + "/values/attributes/SHARED_SCOPE"));
    assertThat(shared.findValuesAsText("key")).containsExactly("b", "d", "j", "n", "s");
    assertThat(value(shared, "n").isIntegralNumber()).isTrue();
    assertThat(value(shared, "n").asLong()).isEqualTo(42);
    assertThat(value(shared, "d").asDouble()).isEqualTo(21.5);
    assertThat(value(shared, "b").isBoolean()).isTrue();
    assertThat(value(shared, "s").isTextual()).isTrue();
    assertThat(value(shared, "s").asText()).isEqualTo("1.10");
    assertThat(value(shared, "j").toString()).isEqualTo("{\"a\":[1,\"x\"]}");
    for (JsonNode attribute : shared) {
      assertThat(attribute.get("lastUpdateTs").asLong()).isBetween(before, after);
    }
    JsonNode server = ok(get(base + "/values/attributes/SERVER_SCOPE?keys=limit"));
    assertThat(server).hasSize(1);
    assertThat(value(server, "limit").asLong()).isEqualTo(-7);
    assertThat(ok(get(base + "/values/attributes")).findValuesAsText("key"))
        .containsExactlyInAnyOrder("b", "d", "j", "n", "s", "limit", "note");
  }

  @Test
  void should_overwrite_a_value_with_a_value_of_another_type() {
    Device device = createDevice("attr-overwrite");
    String base = "/api/plugins/telemetry/DEVICE/" + device.id();

    ok(post(base + "/attributes/SERVER_SCOPE", "{\"mode\":1}"));
    ok(post(base + "/attributes/SERVER_SCOPE", "{\"mode\":\"eco\"}"));

    JsonNode server = ok(get(base + "/values/attributes/SERVER_SCOPE"));
    assertThat(server).hasSize(1);
    assertThat(value(server, "mode").asText()).isEqualTo("eco");
  }

  @Test
  void should_list_attribute_keys_of_each_scope_and_of_all() {
    Device device = createDevice("attr-keys", "attr-keys-token");
    String base = "/api/plugins/telemetry/DEVICE/" + device.id();
    publishClientAttributes("attr-keys-token", "{\"fw\":\"1.0\",\"common\":1}");
    ok(post(base + "/attributes/SHARED_SCOPE", "{\"target\":20,\"common\":2}"));
    ok(post(base + "/attributes/SERVER_SCOPE", "{\"owner\":\"ops\"}"));

    assertThat(keys(base + "/keys/attributes/CLIENT_SCOPE")).containsExactly("common", "fw");
    assertThat(keys(base + "/keys/attributes/SHARED_SCOPE")).containsExactly("common", "target");
    assertThat(keys(base + "/keys/attributes/SERVER_SCOPE")).containsExactly("owner");
    assertThat(keys(base + "/keys/attributes")).containsExactly("common", "fw", "owner", "target");
  }

  @Test
  void should_delete_attributes_in_each_scope() {
    Device device = createDevice("attr-delete", "attr-delete-token");
    String base = "/api/plugins/telemetry/DEVICE/" + device.id();
    publishClientAttributes("attr-delete-token", "{\"c1\":1,\"c2\":2}");
    ok(post(base + "/attributes/SHARED_SCOPE", "{\"s1\":1,\"s2\":2}"));
    ok(post(base + "/attributes/SERVER_SCOPE", "{\"v1\":1,\"v2\":2}"));

    assertThat(delete(base + "/CLIENT_SCOPE?keys=c1").statusCode()).isEqualTo(200);
    assertThat(delete(base + "/SHARED_SCOPE?keys=s1,s2,never-set").statusCode()).isEqualTo(200);
    assertThat(
            delete("/api/plugins/telemetry/" + device.id() + "/SERVER_SCOPE?keys=v2").statusCode())
        .isEqualTo(200);

    assertThat(keys(base + "/keys/attributes")).containsExactly("c2", "v1");
    assertThat(ok(get(base + "/values/attributes/SHARED_SCOPE"))).isEmpty();
  }

  @Test
  void should_refuse_client_scope_saves_bad_bodies_unknown_devices_and_other_entity_types() {
    Device device = createDevice("attr-refused");
    String base = "/api/plugins/telemetry/DEVICE/" + device.id();

    assertError(post(base + "/attributes/CLIENT_SCOPE", "{\"t\":1}"), 400);
    assertError(post(base + "/attributes/SHARED_SCOPE", "{\"t\":"), 400);
    assertError(post(base + "/attributes/SHARED_SCOPE", "[{\"t\":1}]"), 400);
    assertError(post(base + "/attributes/SHARED_SCOPE", "{}"), 400);
    assertError(post(base + "/attributes/BOGUS_SCOPE", "{\"t\":1}"), 400);
    assertError(delete(base + "/SHARED_SCOPE"), 400);
    String unknown = "/api/plugins/telemetry/DEVICE/" + DeviceId.random();
    assertError(post(unknown + "/attributes/SHARED_SCOPE", "{\"t\":1}"), 404);
    assertError(get(unknown + "/values/attributes"), 404);
    assertError(get(unknown + "/keys/attributes"), 404);
    assertError(
        post("/api/plugins/telemetry/ASSET/" + device.id() + "/attributes/SERVER_SCOPE", "{}"),
        400);
    assertThat(ok(get(base + "/values/attributes"))).isEmpty();
  }

  private void publishClientAttributes(String accessToken, String payload) {
    Mqtt3BlockingClient client = client(accessToken);
    client.connectWith().simpleAuth().username(accessToken).applySimpleAuth().send();
    try {
      publish(client, "v1/devices/me/attributes", payload);
    } finally {
      client.disconnect();
    }
  }

  private List<String> keys(String path) {
    List<String> keys = new ArrayList<>();
    ok(get(path)).forEach(key -> keys.add(key.asText()));
    return keys;
  }

  private static JsonNode value(JsonNode attributes, String key) {
    for (JsonNode attribute : attributes) {
      if (attribute.get("key").asText().equals(key)) {
        return attribute.get("value");
      }
    }
    throw new AssertionError("no attribute " + key + " in " + attributes);
  }
}
