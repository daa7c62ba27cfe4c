package io.fieldline.server.devhttp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.device.Device;
import io.fieldline.server.ServerTestBase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link ServerTestBase}'s real server, with the administrator logged in over REST and the calls a
 * device makes: no authorization header, the token in the path, sent with the JDK's HTTP client.
 */
abstract class DeviceApiTestBase extends ServerTestBase {

  protected static final ObjectMapper JSON = new ObjectMapper();

  protected String adminToken;

  @BeforeAll
  @Override
  protected void startServer() throws IOException {
    super.startServer();
    HttpResponse<String> login =
        post(
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(login.statusCode()).isEqualTo(200);
    adminToken = json(login).get("token").asText();
  }

  /** A new device with a token of its own. */
  protected Device device() {
    String name = "http-" + UUID.randomUUID();
    return createDevice(name, name);
  }

  /** A device's request: no authorization header, the token is in the path. */
  protected HttpRequest.Builder device(String method, String path, String body) {
    return HttpRequest.newBuilder(uri(path))
        .header("Content-Type", "application/json")
        .method(
            method,
            body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
  }

  protected HttpResponse<String> devicePost(String path, String body) {
    return send(device("POST", path, body));
  }

  protected HttpResponse<String> deviceGet(String path) {
    return send(device("GET", path, null));
  }

  protected CompletableFuture<HttpResponse<String>> deviceGetAsync(String path) {
    return http.sendAsync(device("GET", path, null).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The administrator's REST call. */
  protected HttpRequest.Builder admin(String path, String body) {
    return HttpRequest.newBuilder(uri(path))
        .header("Content-Type", "application/json")
        .header("X-Authorization", "Bearer " + adminToken)
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  protected HttpResponse<String> adminGet(String path) {
    return get(path, adminToken);
  }

  protected static JsonNode json(HttpResponse<String> response) {
    return json(response.body());
  }

  protected static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
