package io.fieldline.server.provision;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * ThingsBoard's HTTP provisioning, {@code POST /api/v1/provision}, on a real server with the JDK's
 * HTTP client: the answer is MQTT's JSON with status 200, the credential it gives then works on the
 * HTTP device API, a wrong secret creates nothing, and the HTTP and MQTT paths share one set of
 * limits.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HttpProvisioningIT extends ProvisionTestBase {

  @Override
  protected Map<String, Object> overrides() {
    return Map.of(
        "fieldline.provision.per-address-burst", 1000,
        "fieldline.provision.max-failures-per-address", 4);
  }

  /** The request posted without any authentication, as a device without a credential posts it. */
  private HttpResponse<String> provisionOverHttp(String request) {
    return post("/api/v1/provision", null, request);
  }

  @Test
  @Order(1)
  void should_create_a_device_whose_generated_token_then_uploads_telemetry() {
    String profile = createProfile("http-line", "ALLOW_CREATE_NEW_DEVICES", "http-key", "http-s3");

    HttpResponse<String> response =
        provisionOverHttp(request("http-sensor-1", "http-key", "http-s3", ""));

    JsonNode answer = ok(response);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(answer.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(answer.path("credentialsType").asText()).isEqualTo("ACCESS_TOKEN");
    String token = answer.path("credentialsValue").asText();
    assertThat(token).hasSize(20);
    JsonNode device = deviceNamed("http-sensor-1");
    assertThat(device).isNotNull();
    assertThat(device.path("deviceProfileId").path("id").asText()).isEqualTo(profile);
    assertThat(device.path("type").asText()).isEqualTo("http-line");

    HttpResponse<String> upload =
        post("/api/v1/" + token + "/telemetry", null, "{\"temperature\":21.5}");

    assertThat(upload.statusCode()).as(upload.body()).isEqualTo(200);
    assertThat(rows(device.path("id").path("id").asText())).isEqualTo(1);
  }

  @Test
  @Order(2)
  void should_answer_with_the_device_own_token_when_it_asks_for_one() {
    createProfile("http-own", "ALLOW_CREATE_NEW_DEVICES", "http-own-key", "http-own-s3");

    JsonNode answer =
        ok(
            provisionOverHttp(
                request(
                    "http-sensor-2",
                    "http-own-key",
                    "http-own-s3",
                    ",\"credentialsType\":\"ACCESS_TOKEN\",\"token\":\"http-own-token-2\"")));

    assertThat(answer.path("status").asText()).isEqualTo("SUCCESS");
    assertThat(answer.path("credentialsValue").asText()).isEqualTo("http-own-token-2");
    assertThat(post("/api/v1/http-own-token-2/attributes", null, "{\"fw\":\"1.0\"}").statusCode())
        .isEqualTo(200);
  }

  @Test
  @Order(3)
  void should_answer_not_found_with_200_and_create_nothing_when_the_secret_is_wrong() {
    createProfile("http-guarded", "ALLOW_CREATE_NEW_DEVICES", "http-g-key", "http-g-s3");
    long before = deviceCount();

    JsonNode answer =
        ok(provisionOverHttp(request("http-intruder", "http-g-key", "not-the-secret", "")));

    assertThat(answer.path("status").asText()).isEqualTo("NOT_FOUND");
    assertThat(answer.path("errorMsg").asText()).isEqualTo("Provision data was not found!");
    assertThat(answer.has("credentialsValue")).isFalse();
    assertThat(deviceNamed("http-intruder")).isNull();
    assertThat(deviceCount()).isEqualTo(before);
  }

  @Test
  @Order(4)
  void should_answer_failure_when_the_body_is_not_a_provisioning_request() {
    JsonNode answer = ok(provisionOverHttp("[1,2,3]"));

    assertThat(answer.path("status").asText()).isEqualTo("FAILURE");
  }

  @Test
  @Order(5)
  void should_refuse_other_methods_than_post() {
    HttpResponse<String> response = get("/api/v1/provision", null);

    assertThat(response.statusCode()).isEqualTo(405);
  }

  @Test
  @Order(Integer.MAX_VALUE)
  void should_lock_out_an_address_on_both_paths_once_it_guessed_too_often_over_http() {
    createProfile("http-locked", "ALLOW_CREATE_NEW_DEVICES", "http-l-key", "http-l-s3");
    long before = deviceCount();

    String last = "NOT_FOUND";
    for (int guess = 0; guess < 5 && last.equals("NOT_FOUND"); guess++) {
      last =
          ok(provisionOverHttp(request("http-guesser", "http-l-key", "guess-" + guess, "")))
              .path("status")
              .asText();
    }
    JsonNode overMqtt = provision(request("http-guesser", "http-l-key", "http-l-s3", ""));

    assertThat(last).isEqualTo("FAILURE");
    assertThat(overMqtt.path("status").asText())
        .as("the right secret over MQTT, from the address locked out over HTTP")
        .isEqualTo("FAILURE");
    assertThat(overMqtt.path("errorMsg").asText()).contains("too many");
    assertThat(deviceCount()).isEqualTo(before);
  }
}
