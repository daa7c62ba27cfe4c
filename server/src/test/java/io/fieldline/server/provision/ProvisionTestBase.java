package io.fieldline.server.provision;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
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
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * One real Fieldline server per test class, on free ports of 127.0.0.1, against the module's shared
 * Cassandra child JVM (the shared test keyspace, emptied), called over REST as the administrator.
 * The same start as the server package's ServerTestBase, which is package-private.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ProvisionTestBase {

  static final ObjectMapper JSON = new ObjectMapper();
  static final String ADMIN = "admin@provision.local";
  static final String PASSWORD = "provision-password-1";

  FieldlineServer server;
  CqlSession cql;
  String token;
  private final HttpClient http = HttpClient.newHttpClient();

  /** Extra HOCON for a test class. */
  Map<String, Object> overrides() {
    return Map.of();
  }

  @BeforeAll
  void startServer() throws IOException {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    String keyspace = ItKeyspace.fresh(cassandra);
    Path dataDir = Files.createTempDirectory("fieldline-provision-it-");
    String contact =
        cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort();
    Config config =
        ConfigFactory.parseMap(overrides())
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
    server = FieldlineServer.start(config);
    cql =
        CqlSession.builder()
            .addContactPoint(cassandra.cqlAddress())
            .withLocalDatacenter(cassandra.localDatacenter())
            .withKeyspace(keyspace)
            .build();
    HttpResponse<String> login =
        post(
            "/api/auth/login",
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    token = ok(login).get("token").asText();
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

  int mqttPort() {
    return server.mqttPort();
  }

  HttpResponse<String> get(String path) {
    return send(request(path).GET());
  }

  HttpResponse<String> post(String path, String body) {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  HttpResponse<String> delete(String path) {
    return send(request(path).DELETE());
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path));
    if (token != null) {
      builder.header("X-Authorization", "Bearer " + token);
    }
    return builder;
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
    return cql.execute(
            "SELECT count(*) FROM ts_kv WHERE device_id = ? ALLOW FILTERING",
            UUID.fromString(deviceId))
        .one()
        .getLong(0);
  }

  /** The sum of every sample of the server's Prometheus meters whose line starts with prefix. */
  double metric(String prefix) {
    return server
        .metrics()
        .scrape()
        .lines()
        .filter(line -> line.startsWith(prefix))
        .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
        .sum();
  }
}
