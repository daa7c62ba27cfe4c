package io.fieldline.server;

import com.datastax.oss.driver.api.core.CqlSession;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * Starts one real Fieldline server per test class against the module's shared Cassandra child JVM,
 * on free ports of 127.0.0.1, on the {@linkplain ItKeyspace shared keyspace} emptied for the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ServerTestBase {

  protected static final String ADMIN = "admin@test.local";
  protected static final String PASSWORD = "test-password-123";

  protected EmbeddedCassandra cassandra;
  protected FieldlineServer server;
  protected CqlSession cql;
  protected String keyspace;
  protected final HttpClient http = HttpClient.newHttpClient();

  /** Extra HOCON for a test class (e.g. a smaller window). */
  protected Map<String, Object> overrides() {
    return Map.of();
  }

  @BeforeAll
  protected void startServer() throws IOException {
    cassandra = SharedCassandra.get();
    keyspace = ItKeyspace.fresh(cassandra);
    Path dataDir = Files.createTempDirectory("fieldline-it-");
    server = FieldlineServer.start(config(dataDir));
    cql =
        CqlSession.builder()
            .addContactPoint(cassandra.cqlAddress())
            .withLocalDatacenter(cassandra.localDatacenter())
            .withKeyspace(keyspace)
            // Reconnects quickly after tests that stop and restart Cassandra.
            .withConfigLoader(ItDriver.loader())
            .build();
  }

  protected Config config(Path dataDir) {
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
                    // A short warm-up: the path runs in every test server, quickly. The one
                    // through a private MQTT listener has its own test (MqttWarmUpIT).
                    "fieldline.warm-up.messages = 300",
                    "fieldline.warm-up.mqtt-messages = 0",
                    "fieldline.cassandra.contact-points = \"" + contact + "\"",
                    "fieldline.cassandra.keyspace = " + keyspace,
                    ItDriver.HOCON,
                    "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                        + cassandra.localDatacenter())))
        .withFallback(ConfigFactory.load())
        .resolve();
  }

  @AfterAll
  protected void stopServer() {
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
   * Reads one byte from a raw socket the server is expected to close without answering: the end of
   * the stream, or a reset (Linux resets a connection whose peer closed with bytes of ours still
   * unread, which is the case whenever the client kept writing). Either is a close; a byte is not.
   */
  protected static int readUntilClosed(InputStream in) throws IOException {
    try {
      return in.read();
    } catch (SocketException reset) {
      return -1;
    }
  }

  /** A HiveMQ MQTT 3.1.1 client for this server, not yet connected. */
  protected Mqtt3BlockingClient client(String id) {
    return Mqtt3Client.builder()
        .identifier(id)
        .serverHost("127.0.0.1")
        .serverPort(mqttPort())
        .buildBlocking();
  }

  /** A HiveMQ MQTT 3.1.1 client of {@code device} (its access token as user name), connected. */
  protected Mqtt3BlockingClient connectedDevice(Device device) {
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier("it-" + device.name())
            .serverHost("127.0.0.1")
            .serverPort(mqttPort())
            .simpleAuth()
            .username(device.accessToken())
            .applySimpleAuth()
            .buildBlocking();
    client.connect();
    return client;
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

  protected Device createDevice(String name) {
    return server.registry().create(name, "test", Optional.empty()).toCompletableFuture().join();
  }

  protected Device createDevice(String name, String token) {
    return server.registry().create(name, "test", Optional.of(token)).toCompletableFuture().join();
  }

  protected long rows(Device device) {
    return rows(device.id());
  }

  protected long rows(DeviceId device) {
    return cql.execute(
            "SELECT count(*) FROM ts_kv WHERE device_id = ? ALLOW FILTERING", device.value())
        .one()
        .getLong(0);
  }

  protected HttpResponse<String> get(String path, String token) {
    return send(
        HttpRequest.newBuilder(uri(path)).header("X-Authorization", "Bearer " + token).GET());
  }

  protected HttpResponse<String> post(String path, String token, String body) {
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(uri(path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      builder.header("X-Authorization", "Bearer " + token);
    }
    return send(builder);
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
}
