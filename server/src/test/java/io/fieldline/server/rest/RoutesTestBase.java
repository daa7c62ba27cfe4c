package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Serves a test's routes under {@code /api} on a real Pekko HTTP listener (127.0.0.1, port 0),
 * without the bearer check in front of them ({@code AuthRoutesIT} covers that), and sends real HTTP
 * requests to it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RoutesTestBase {

  static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private ActorSystem<Void> system;
  private ServerBinding binding;

  /** The routes under test, as {@code RestApi} mounts them under {@code /api}. */
  abstract Route routes();

  @BeforeAll
  void bind() {
    system = ActorSystem.create(Behaviors.empty(), getClass().getSimpleName());
    binding =
        Http.get(system)
            .newServerAt("127.0.0.1", 0)
            .bind(Directives.pathPrefix("api", this::routes))
            .toCompletableFuture()
            .join();
  }

  @AfterAll
  void unbind() {
    binding.unbind().toCompletableFuture().join();
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().join();
  }

  HttpResponse<String> get(String path) {
    return send(request(path).GET());
  }

  HttpResponse<String> post(String path, String body) {
    return send(postRequest(path, body));
  }

  HttpResponse<String> put(String path, String body) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(body)));
  }

  HttpResponse<String> delete(String path) {
    return send(request(path).DELETE());
  }

  /** Sends without waiting for the answer. */
  CompletableFuture<HttpResponse<String>> postAsync(String path, String body) {
    return http.sendAsync(postRequest(path, body).build(), HttpResponse.BodyHandlers.ofString());
  }

  static JsonNode json(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Asserts ThingsBoard's error body with this status and its errorCode. */
  static void assertError(HttpResponse<String> response, int status, int errorCode) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    JsonNode body = json(response);
    assertThat(body.get("status").asInt()).isEqualTo(status);
    assertThat(body.get("errorCode").asInt()).isEqualTo(errorCode);
    assertThat(body.get("message").asText()).isNotBlank();
    assertThat(body.get("timestamp").asLong()).isPositive();
  }

  static void assertBadRequest(HttpResponse<String> response) {
    assertError(response, 400, 31);
  }

  static void assertNotFound(HttpResponse<String> response) {
    assertError(response, 404, 32);
  }

  private HttpRequest.Builder postRequest(String path, String body) {
    return request(path)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + binding.localAddress().getPort() + path));
  }

  private HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
