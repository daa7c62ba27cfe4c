package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The ThingsBoard-shaped REST API against a real server and Cassandra. */
class RestApiIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private String token;

  @BeforeAll
  void login() throws Exception {
    HttpResponse<String> response =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(response.statusCode()).isEqualTo(200);
    JsonNode tokens = JSON.readTree(response.body());
    assertThat(tokens.get("refreshToken").asText()).isNotBlank();
    token = tokens.get("token").asText();
  }

  @Test
  void should_answer_401_when_token_is_missing_or_password_is_wrong() {
    assertThat(get("/api/tenant/devices?pageSize=10", "garbage").statusCode()).isEqualTo(401);
    assertThat(
            post("/api/auth/login", null, "{\"username\":\"" + ADMIN + "\",\"password\":\"wrong\"}")
                .statusCode())
        .isEqualTo(401);
  }

  @Test
  void should_create_read_list_and_delete_devices() throws Exception {
    HttpResponse<String> created =
        post(
            "/api/device?accessToken=rest-token-1",
            token,
            "{\"name\":\"rest-device-1\",\"type\":\"sensor\"}");
    assertThat(created.statusCode()).isEqualTo(200);
    JsonNode device = JSON.readTree(created.body());
    assertThat(device.at("/id/entityType").asText()).isEqualTo("DEVICE");
    String id = device.at("/id/id").asText();
    assertThat(JSON.readTree(get("/api/device/" + id, token).body()).get("name").asText())
        .isEqualTo("rest-device-1");
    assertThat(
            JSON.readTree(get("/api/device/" + id + "/credentials", token).body())
                .get("credentialsId")
                .asText())
        .isEqualTo("rest-token-1");
    assertThat(post("/api/device", token, "{\"name\":\"rest-device-1\"}").statusCode())
        .as("duplicate name")
        .isEqualTo(409);
    JsonNode page = JSON.readTree(get("/api/tenant/devices?pageSize=100&page=0", token).body());
    assertThat(page.get("data").findValuesAsText("name")).contains("rest-device-1");
    assertThat(delete("/api/device/" + id).statusCode()).isEqualTo(200);
    assertThat(get("/api/device/" + id, token).statusCode()).isEqualTo(404);
  }

  @Test
  void should_return_existing_devices_when_bulk_provisioning_is_repeated() throws Exception {
    String body = "{\"namePrefix\":\"bulk-\",\"count\":20,\"tokenPrefix\":\"bulk-token-\"}";
    JsonNode first = JSON.readTree(post("/api/fieldline/devices/bulk", token, body).body());
    JsonNode second = JSON.readTree(post("/api/fieldline/devices/bulk", token, body).body());
    assertThat(first).hasSize(20);
    assertThat(second).isEqualTo(first);
    assertThat(first.get(7).get("accessToken").asText()).isEqualTo("bulk-token-7");
  }

  @Test
  void should_serve_latest_history_aggregates_and_attributes_of_published_data() throws Exception {
    String id = createDevice("rest-telemetry", "rest-telemetry-token").id().toString();
    Mqtt3BlockingClient device =
        Mqtt3Client.builder()
            .identifier("rest-telemetry")
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .buildBlocking();
    device.connectWith().simpleAuth().username("rest-telemetry-token").applySimpleAuth().send();
    for (int i = 0; i < 10; i++) {
      publish(
          device,
          "v1/devices/me/telemetry",
          "{\"ts\":" + (1000 + i * 100) + ",\"values\":{\"t\":" + i + ",\"s\":\"x" + i + "\"}}");
    }
    publish(device, "v1/devices/me/attributes", "{\"fw\":\"1.2.3\",\"on\":true}");
    device.disconnect();
    String base = "/api/plugins/telemetry/DEVICE/" + id;

    assertThat(JSON.readTree(get(base + "/keys/timeseries", token).body()).toString())
        .isEqualTo("[\"s\",\"t\"]");
    JsonNode latest = JSON.readTree(get(base + "/values/timeseries?keys=t,s", token).body());
    assertThat(latest.at("/t/0/ts").asLong()).isEqualTo(1900);
    assertThat(latest.at("/t/0/value").asText()).isEqualTo("9");
    assertThat(latest.at("/s/0/value").asText()).isEqualTo("x9");

    JsonNode raw =
        JSON.readTree(
            get(base + "/values/timeseries?keys=t&startTs=1000&endTs=1500&limit=3", token).body());
    assertThat(raw.get("t").findValuesAsText("ts")).containsExactly("1400", "1300", "1200");

    JsonNode avg =
        JSON.readTree(
            get(
                    base
                        + "/values/timeseries?keys=t&startTs=1000&endTs=2000&interval=500&agg=AVG"
                        + "&useStrictDataTypes=true",
                    token)
                .body());
    assertThat(avg.get("t")).hasSize(2);
    assertThat(avg.get("t").findValues("value").stream().map(JsonNode::asDouble))
        .containsExactlyInAnyOrder(2.0, 7.0);

    JsonNode count =
        JSON.readTree(
            get(
                    base
                        + "/values/timeseries?keys=t&startTs=1000&endTs=2000&interval=1000&agg=COUNT",
                    token)
                .body());
    assertThat(count.at("/t/0/value").asText()).isEqualTo("10");

    assertThat(
            get(
                    base + "/values/timeseries?keys=t&startTs=0&endTs=10000000&interval=1&agg=AVG",
                    token)
                .statusCode())
        .as("more than 700 buckets")
        .isEqualTo(400);

    JsonNode attributes =
        JSON.readTree(get(base + "/values/attributes/CLIENT_SCOPE", token).body());
    assertThat(attributes.findValuesAsText("key")).containsExactlyInAnyOrder("fw", "on");
  }

  @Test
  void should_report_health_and_metrics_without_authentication() {
    assertThat(get("/health/live", "").statusCode()).isEqualTo(200);
    assertThat(get("/health/ready", "").statusCode()).isEqualTo(200);
    HttpResponse<String> metrics = get("/metrics", "");
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body())
        .contains(
            "fieldline_mqtt_connections",
            "fieldline_store_write_latency",
            "fieldline_device_actors_active",
            "fieldline_mqtt_backpressure_pauses_total");
  }

  private static void publish(Mqtt3BlockingClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }

  private HttpResponse<String> delete(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
            .header("X-Authorization", "Bearer " + token)
            .DELETE()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
