package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ThingsBoard's {@code /api/auth/login} and {@code /api/auth/token} against a real server: the
 * token pair's shape, refreshing, both bearer headers, and the 401s of docs/rest-api.md (every
 * export-sink call among them).
 */
class AuthRoutesIT extends ServerTestBase {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PROTECTED = "/api/tenant/devices?pageSize=1&page=0";
  private static final String SINK = "0b1e7f5e-8a6d-4c1e-9d57-3f2b6a4c9e10";

  private JsonNode pair;

  @BeforeAll
  void login() throws IOException {
    HttpResponse<String> response =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(response.statusCode()).isEqualTo(200);
    pair = JSON.readTree(response.body());
  }

  private static String refreshBody(String refreshToken) {
    return "{\"refreshToken\":\"" + refreshToken + "\"}";
  }

  @Test
  void should_return_two_signed_jwts_when_the_login_is_right() {
    assertThat(pair.get("token").asText()).matches("[\\w-]+\\.[\\w-]+\\.[\\w-]+");
    assertThat(pair.get("refreshToken").asText()).matches("[\\w-]+\\.[\\w-]+\\.[\\w-]+");
    assertThat(get(PROTECTED, pair.get("token").asText()).statusCode()).isEqualTo(200);
  }

  @Test
  void should_return_a_working_pair_when_the_refresh_token_is_posted() throws IOException {
    HttpResponse<String> refreshed =
        post("/api/auth/token", null, refreshBody(pair.get("refreshToken").asText()));
    assertThat(refreshed.statusCode()).isEqualTo(200);
    JsonNode next = JSON.readTree(refreshed.body());
    assertThat(get(PROTECTED, next.get("token").asText()).statusCode()).isEqualTo(200);
    assertThat(
            post("/api/auth/token", null, refreshBody(next.get("refreshToken").asText()))
                .statusCode())
        .isEqualTo(200);
  }

  @Test
  void should_answer_401_when_a_token_is_used_as_the_other_kind() throws IOException {
    HttpResponse<String> refreshAsAccess = get(PROTECTED, pair.get("refreshToken").asText());
    assertThat(refreshAsAccess.statusCode()).isEqualTo(401);
    JsonNode body = JSON.readTree(refreshAsAccess.body());
    assertThat(body.get("status").asInt()).isEqualTo(401);
    assertThat(body.get("message").asText()).isEqualTo("Authentication failed");

    HttpResponse<String> accessAsRefresh =
        post("/api/auth/token", null, refreshBody(pair.get("token").asText()));
    assertThat(accessAsRefresh.statusCode()).isEqualTo(401);
    assertThat(JSON.readTree(accessAsRefresh.body()).get("message").asText())
        .isEqualTo("Invalid refresh token");
  }

  @Test
  void should_answer_401_when_the_refresh_body_is_missing_or_not_json() {
    assertThat(post("/api/auth/token", null, "{}").statusCode()).isEqualTo(401);
    assertThat(post("/api/auth/token", null, "not json").statusCode()).isEqualTo(401);
  }

  @Test
  void should_answer_401_when_the_user_or_the_password_is_wrong() throws IOException {
    HttpResponse<String> wrongUser =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"someone@else\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(wrongUser.statusCode()).isEqualTo(401);
    assertThat(JSON.readTree(wrongUser.body()).get("message").asText())
        .isEqualTo("Invalid username or password");
    assertThat(
            post("/api/auth/login", null, "{\"username\":\"" + ADMIN + "\",\"password\":\"x\"}")
                .statusCode())
        .isEqualTo(401);
  }

  @Test
  void should_accept_the_standard_authorization_header_when_it_carries_the_bearer()
      throws IOException, InterruptedException {
    URI uri = URI.create("http://127.0.0.1:" + server.httpPort() + PROTECTED);
    HttpResponse<String> standard =
        http.send(
            HttpRequest.newBuilder(uri)
                .header("Authorization", "Bearer " + pair.get("token").asText())
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(standard.statusCode()).isEqualTo(200);
    HttpResponse<String> none =
        http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(none.statusCode()).isEqualTo(401);
  }

  /**
   * Every call of {@code /api/fieldline/sinks} (method and path), answered 401 without a token;
   * with one it reaches the sink routes, which answer it (a list, a refusal of the incomplete
   * definition, or no such sink).
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "GET ",
        "POST ",
        "GET /" + SINK,
        "PUT /" + SINK,
        "DELETE /" + SINK,
        "POST /" + SINK + "/pause",
        "POST /" + SINK + "/resume",
        "POST /" + SINK + "/replay?fromTs=0",
        "GET /" + SINK + "/deadLetters"
      })
  void should_answer_401_when_a_sink_call_has_no_token(String call) throws IOException {
    String method = call.substring(0, call.indexOf(' '));
    URI uri = uri("/api/fieldline/sinks" + call.substring(call.indexOf(' ') + 1));
    String body = "{\"name\":\"s\",\"type\":\"KAFKA\"}";
    HttpRequest.Builder anonymous =
        HttpRequest.newBuilder(uri).method(method, HttpRequest.BodyPublishers.ofString(body));

    HttpResponse<String> refused = send(anonymous);
    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(401);
    assertThat(JSON.readTree(refused.body()).get("message").asText())
        .isEqualTo("Authentication failed");

    HttpResponse<String> wired =
        send(
            HttpRequest.newBuilder(uri)
                .header("X-Authorization", "Bearer " + pair.get("token").asText())
                .method(method, HttpRequest.BodyPublishers.ofString(body)));
    assertThat(wired.statusCode()).as(wired.body()).isIn(200, 400, 404);
  }
}
