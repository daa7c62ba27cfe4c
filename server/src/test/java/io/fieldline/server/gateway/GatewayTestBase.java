package io.fieldline.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * One real Fieldline server per test class for the gateway ITs, started as {@code
 * io.fieldline.server.ServerTestBase} starts it (which this package cannot extend: it is
 * package-private): the module's shared Cassandra child JVM, the shared keyspace emptied, free
 * ports of 127.0.0.1, the administrator logged in over REST.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class GatewayTestBase {

  protected static final ObjectMapper JSON = new ObjectMapper();
  private static final String ADMIN = "admin@gateway.local";
  private static final String PASSWORD = "gateway-password-123";

  protected EmbeddedCassandra cassandra;
  protected FieldlineServer server;
  protected CqlSession cql;
  protected String adminToken;
  private final HttpClient http = HttpClient.newHttpClient();

  /** Extra HOCON for a test class. */
  protected Map<String, Object> overrides() {
    return Map.of();
  }

  @BeforeAll
  void startServer() throws IOException {
    cassandra = SharedCassandra.get();
    String keyspace = ItKeyspace.fresh(cassandra);
    Path dataDir = Files.createTempDirectory("fieldline-gateway-it-");
    server = FieldlineServer.start(config(dataDir, keyspace));
    cql =
        CqlSession.builder()
            .addContactPoint(cassandra.cqlAddress())
            .withLocalDatacenter(cassandra.localDatacenter())
            .withKeyspace(keyspace)
            // Reconnect quickly after a test that stops and restarts Cassandra.
            .withConfigLoader(
                DriverConfigLoader.programmaticBuilder()
                    .withDuration(
                        DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
                    .withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(1))
                    .build())
            .build();
    HttpResponse<String> login =
        send(
            "POST",
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    assertThat(login.statusCode()).as(login.body()).isEqualTo(200);
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

  protected int mqttPort() {
    return server.mqttPort();
  }

  /**
   * Creates a device over REST, as ThingsBoard's UI does: {@code POST /api/device?accessToken=}
   * with {@code additionalInfo.gateway = true} when {@code gateway}.
   *
   * @return the device's id
   */
  protected UUID createDevice(String name, String token, boolean gateway) {
    String body =
        "{\"name\":\""
            + name
            + "\",\"type\":\""
            + (gateway ? "gateway" : "default")
            + "\""
            + (gateway ? ",\"additionalInfo\":{\"gateway\":true,\"description\":\"it\"}" : "")
            + "}";
    JsonNode device = ok(post("/api/device?accessToken=" + token, body));
    return UUID.fromString(device.at("/id/id").asText());
  }

  /** Every device of the listing whose name starts with {@code prefix}, by name. */
  protected Map<String, JsonNode> listed(String prefix) {
    JsonNode page = ok(get("/api/tenant/devices?pageSize=1000&page=0&textSearch=" + prefix));
    Map<String, JsonNode> byName = new HashMap<>();
    for (JsonNode device : page.get("data")) {
      if (device.get("name").asText().startsWith(prefix)) {
        byName.put(device.get("name").asText(), device);
      }
    }
    return byName;
  }

  /** Every row of {@code ts_kv} for {@code key}: device id → the rows' (ts, long value). */
  protected Map<UUID, List<long[]>> rows(String key) {
    Map<UUID, List<long[]>> rows = new HashMap<>();
    for (Row row : cql.execute("SELECT device_id, key, ts, long_v FROM ts_kv")) {
      if (key.equals(row.getString("key"))) {
        rows.computeIfAbsent(row.getUuid("device_id"), id -> new ArrayList<>())
            .add(new long[] {row.getLong("ts"), row.getLong("long_v")});
      }
    }
    return rows;
  }

  /** How many rows of {@code ts_kv} each device has, by key. */
  protected Map<UUID, Map<String, Integer>> rowCounts() {
    Map<UUID, Map<String, Integer>> counts = new HashMap<>();
    for (Row row : cql.execute("SELECT device_id, key FROM ts_kv")) {
      counts
          .computeIfAbsent(row.getUuid("device_id"), id -> new HashMap<>())
          .merge(row.getString("key"), 1, Integer::sum);
    }
    return counts;
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

  protected HttpResponse<String> get(String path) {
    return send("GET", path, adminToken, null);
  }

  protected HttpResponse<String> post(String path, String body) {
    return send("POST", path, adminToken, body);
  }

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

  private HttpResponse<String> send(String method, String path, String token, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      request.header("X-Authorization", "Bearer " + token);
    }
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
