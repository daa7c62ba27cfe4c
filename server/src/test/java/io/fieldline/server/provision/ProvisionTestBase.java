package io.fieldline.server.provision;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.MqttGlobalPublishFilter;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.hivemq.client.mqtt.mqtt3.message.publish.Mqtt3Publish;
import io.fieldline.common.DeviceId;
import io.fieldline.server.ServerTestBase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;

/**
 * A real server ({@link ServerTestBase}) called over REST as the administrator (logged in once per
 * class), with the profile and device helpers the provisioning tests share.
 */
abstract class ProvisionTestBase extends ServerTestBase {

  static final ObjectMapper JSON = new ObjectMapper();
  static final String REQUEST = "/provision/request";
  static final String RESPONSE = "/provision/response";
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  String token;

  @BeforeAll
  void login() {
    HttpResponse<String> login =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    token = ok(login).get("token").asText();
  }

  HttpResponse<String> get(String path) {
    return get(path, token);
  }

  HttpResponse<String> post(String path, String body) {
    return post(path, token, body);
  }

  HttpResponse<String> delete(String path) {
    return send(
        HttpRequest.newBuilder(uri(path)).header("X-Authorization", "Bearer " + token).DELETE());
  }

  /** The body of a 200 answer. */
  static JsonNode ok(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json(response.body());
  }

  /** Asserts ThingsBoard's error body with {@code status}; returns its message. */
  static String error(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode body = json(response.body());
    assertThat(body.get("status").asInt()).isEqualTo(status);
    return body.get("message").asText();
  }

  static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Creates a profile over REST: {@code provisionType} with key and secret (none for DISABLED).
   *
   * @return its id
   */
  String createProfile(String name, String provisionType, String key, String secret) {
    String body =
        "{\"name\":\""
            + name
            + "\",\"type\":\"DEFAULT\",\"transportType\":\"MQTT\",\"provisionType\":\""
            + provisionType
            + "\""
            + (key == null ? "" : ",\"provisionDeviceKey\":\"" + key + "\"")
            + ",\"profileData\":{\"configuration\":{\"type\":\"DEFAULT\"},"
            + "\"transportConfiguration\":{\"type\":\"MQTT\"},"
            + "\"provisionConfiguration\":{\"type\":\""
            + provisionType
            + "\""
            + (secret == null ? "" : ",\"provisionDeviceSecret\":\"" + secret + "\"")
            + "}}}";
    return ok(post("/api/deviceProfile", body)).path("id").path("id").asText();
  }

  /**
   * Provisions over a HiveMQ MQTT 3.1.1 client logged in as {@code provision}: subscribes to the
   * answer, publishes the request with QoS 1, and returns the answer once it disconnected.
   */
  JsonNode provision(String request) {
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("prov-" + CLIENTS.incrementAndGet())
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username("provision")
            .applySimpleAuth()
            .buildBlocking();
    client.connect();
    try (Mqtt3BlockingClient.Mqtt3Publishes answers =
        client.publishes(MqttGlobalPublishFilter.ALL)) {
      client.subscribeWith().topicFilter(RESPONSE).qos(MqttQos.AT_LEAST_ONCE).send();
      client
          .publishWith()
          .topic(REQUEST)
          .qos(MqttQos.AT_LEAST_ONCE)
          .payload(request.getBytes(StandardCharsets.UTF_8))
          .send();
      Optional<Mqtt3Publish> answer = answers.receive(10, TimeUnit.SECONDS);
      assertThat(answer).as("an answer on " + RESPONSE).isPresent();
      assertThat(answer.get().getTopic().toString()).isEqualTo(RESPONSE);
      // As ThingsBoard's clients do: disconnect once the answer is read.
      client.disconnect();
      return json(new String(answer.get().getPayloadAsBytes(), StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static String request(String name, String key, String secret, String credentials) {
    return "{"
        + (name == null ? "" : "\"deviceName\":\"" + name + "\",")
        + "\"provisionDeviceKey\":\""
        + key
        + "\",\"provisionDeviceSecret\":\""
        + secret
        + "\""
        + credentials
        + "}";
  }

  /** The device list's total, as the REST API counts it. */
  long deviceCount() {
    return ok(get("/api/tenant/devices?pageSize=1&page=0")).get("totalElements").asLong();
  }

  /** The device named {@code name} over REST, or null when there is none. */
  JsonNode deviceNamed(String name) {
    HttpResponse<String> response = get("/api/tenant/devices?deviceName=" + name);
    return response.statusCode() == 404 ? null : ok(response);
  }

  long rows(String deviceId) {
    return rows(new DeviceId(UUID.fromString(deviceId)));
  }
}
