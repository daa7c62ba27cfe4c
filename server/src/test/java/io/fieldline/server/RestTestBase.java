package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;

/**
 * A real server ({@link ServerTestBase}) called over REST as the administrator: logs in once per
 * class and sends every request with the bearer token.
 */
abstract class RestTestBase extends ServerTestBase {

  protected static final ObjectMapper JSON = new ObjectMapper();

  protected String token;

  @BeforeAll
  void login() {
    HttpResponse<String> response =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(response.statusCode()).isEqualTo(200);
    token = json(response).get("token").asText();
  }

  protected HttpResponse<String> get(String path) {
    return get(path, token);
  }

  protected HttpResponse<String> post(String path, String body) {
    return post(path, token, body);
  }

  protected HttpResponse<String> delete(String path) {
    return send(
        HttpRequest.newBuilder(uri(path)).header("X-Authorization", "Bearer " + token).DELETE());
  }

  /** The body of a 200 answer, as JSON. */
  protected static JsonNode ok(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json(response);
  }

  protected static JsonNode json(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Asserts ThingsBoard's error body with {@code status}. */
  protected static void assertError(HttpResponse<String> response, int status) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode body = json(response);
    assertThat(body.get("status").asInt()).isEqualTo(status);
    assertThat(body.get("message").asText()).isNotBlank();
    assertThat(body.has("errorCode")).isTrue();
  }

  /** Publishes with QoS 1: the PUBACK comes once the values are stored. */
  protected static void publish(Mqtt3BlockingClient client, String topic, String payload) {
    client
        .publishWith()
        .topic(topic)
        .qos(MqttQos.AT_LEAST_ONCE)
        .payload(payload.getBytes(StandardCharsets.UTF_8))
        .send();
  }
}
