package io.fieldline.server.devhttp;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceId;
import io.fieldline.server.FieldlineServer;
import io.fieldline.server.ItKeyspace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * One real Fieldline server per test class, on free ports of 127.0.0.1, against the module's shared
 * Cassandra child JVM and the shared test keyspace (emptied for the class), as {@code
 * io.fieldline.server.ServerTestBase} starts it (that class is package-private there). Devices are
 * called with the JDK's {@link HttpClient}; the administrator's REST calls carry a bearer token.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DeviceApiTestBase {

  protected static final ObjectMapper JSON = new ObjectMapper();
  private static final String ADMIN = "admin@test.local";
  private static final String PASSWORD = "test-password-123";

  protected EmbeddedCassandra cassandra;
  protected FieldlineServer server;
  protected CqlSession cql;
  protected String adminToken;
  protected final HttpClient http = HttpClient.newHttpClient();

  /** Extra HOCON for a test class. */
  protected Map<String, Object> overrides() {
    return Map.of();
  }

  @BeforeAll
  void startServer() throws IOException {
    cassandra = SharedCassandra.get();
    String keyspace = ItKeyspace.fresh(cassandra);
    Path dataDir = Files.createTempDirectory("fieldline-devhttp-it-");
    server = FieldlineServer.start(config(dataDir, keyspace));
    cql =
        CqlSession.builder()
            .addContactPoint(cassandra.cqlAddress())
            .withLocalDatacenter(cassandra.localDatacenter())
            .withKeyspace(keyspace)
            .build();
    HttpResponse<String> login =
        send(
            HttpRequest.newBuilder(uri("/api/auth/login"))
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}")));
    assertThat(login.statusCode()).isEqualTo(200);
    adminToken = json(login).get("token").asText();
  }

  private Config config(Path dataDir, String keyspace) {
    String contact =
        cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort();
    return ConfigFactory.parseMap(overrides())
        .withFallback(
            ConfigFactory.parseString(
                String.join(
                    "\n",
                    "fieldline.data-dir = \"" + dataDir + "\"",
                    "fieldline.mqtt.port = 0",
                    "fieldline.mqtt.host = \"127.0.0.1\"",
                    "fieldline.http.port = 0",
                    "fieldline.http.host = \"127.0.0.1\"",
                    "fieldline.admin.username = \"" + ADMIN + "\"",
                    "fieldline.admin.password = \"" + PASSWORD + "\"",
                    "fieldline.demo-device.enabled = false",
                    "fieldline.warm-up.messages = 300",
                    "fieldline.cassandra.contact-points = \"" + contact + "\"",
                    "fieldline.cassandra.keyspace = " + keyspace,
                    "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                        + cassandra.localDatacenter())))
        .withFallback(ConfigFactory.load())
        .resolve();
  }

  @AfterAll
  void stopServer() {
    if (cql != null) {
      cql.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /** A new device with a token of its own. */
  protected Device device() {
    String name = "http-" + UUID.randomUUID();
    return server.registry().create(name, "test", Optional.of(name)).toCompletableFuture().join();
  }

  /** Time-series rows of {@code device}, read straight from Cassandra. */
  protected long rows(DeviceId device) {
    return cql.execute(
            "SELECT count(*) FROM ts_kv WHERE device_id = ? ALLOW FILTERING", device.value())
        .one()
        .getLong(0);
  }

  /** The sum of every sample of the server's Prometheus meters whose line starts with prefix. */
  protected double metric(String prefix) {
    return server
        .metrics()
        .scrape()
        .lines()
        .filter(line -> line.startsWith(prefix))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
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
    return send(
        HttpRequest.newBuilder(uri(path)).header("X-Authorization", "Bearer " + adminToken).GET());
  }

  protected URI uri(String path) {
    return URI.create("http://127.0.0.1:" + server.httpPort() + path);
  }

  protected HttpResponse<String> send(HttpRequest.Builder request) {
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  protected static JsonNode json(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  protected static JsonNode json(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
