package io.fieldline.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.MqttBasicLogin;
import io.fieldline.common.device.Device;
import io.fieldline.server.FieldlineServer;
import io.fieldline.server.ItDriver;
import io.fieldline.server.ItKeyspace;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Optional;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Two Fieldline servers in this JVM forming a cluster (a real ZooKeeper, Curator {@code
 * TestingServer}; real gRPC on 127.0.0.1; the module's shared Cassandra, one keyspace): a
 * credential replaced, or a device deleted, over REST on node A makes node B forget its cached
 * lookups of the device and close the device's MQTT session there, before A answers. Without the
 * revocation, B would serve its cache for {@code device-cache.ttl} (5 minutes) and keep the
 * session.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CredentialsRevocationIT {

  private static final String ADMIN = "admin@revocation.test";
  private static final String PASSWORD = "revocation-password-123";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newHttpClient();
  private TestingServer zookeeper;
  private String keyspace;
  private FieldlineServer a;
  private FieldlineServer b;
  private String token;

  @BeforeAll
  void startCluster() throws Exception {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1), true);
    // Migrated (once) and emptied before the nodes: they start on a ready schema.
    keyspace = ItKeyspace.fresh(cassandra);
    a = FieldlineServer.start(config(cassandra, "a"));
    b = FieldlineServer.start(config(cassandra, "b"));
    await("a ring of two")
        .atMost(Duration.ofSeconds(30))
        .until(() -> node(a).view().ring().nodes().size() == 2);
    await("b ring of two")
        .atMost(Duration.ofSeconds(30))
        .until(() -> node(b).view().ring().nodes().size() == 2);
    HttpResponse<String> login =
        send(
            a,
            "/api/auth/login",
            null,
            "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}");
    token = JSON.readTree(login.body()).get("token").asText();
  }

  private Config config(EmbeddedCassandra cassandra, String nodeId) throws IOException {
    return ConfigFactory.parseString(
            String.join(
                "\n",
                "fieldline.data-dir = \"" + Files.createTempDirectory("fieldline-rev-") + "\"",
                "fieldline.mqtt.port = 0",
                "fieldline.mqtt.host = \"127.0.0.1\"",
                "fieldline.http.port = 0",
                "fieldline.http.host = \"127.0.0.1\"",
                "fieldline.admin.username = \"" + ADMIN + "\"",
                "fieldline.admin.password = \"" + PASSWORD + "\"",
                "fieldline.auth.jwt-secret = \"revocation-test-secret-shared-by-both-nodes-0123\"",
                "fieldline.demo-device.enabled = false",
                "fieldline.warm-up.messages = 300",
                "fieldline.warm-up.mqtt-messages = 160",
                "fieldline.cassandra.contact-points = \""
                    + cassandra.cqlAddress().getHostString()
                    + ":"
                    + cassandra.cqlAddress().getPort()
                    + "\"",
                "fieldline.cassandra.keyspace = " + keyspace,
                ItDriver.HOCON,
                "fieldline.cassandra.create-schema = false",
                "fieldline.cassandra.password-hashing.cost = 4",
                "fieldline.cluster.zookeeper = \"" + zookeeper.getConnectString() + "\"",
                "fieldline.cluster.node-id = " + nodeId,
                "fieldline.cluster.grpc-host = 127.0.0.1",
                "fieldline.cluster.grpc-port = 0",
                "fieldline.cluster.advertised-host = 127.0.0.1",
                "fieldline.cluster.rebalance-delay = 0 s",
                "fieldline.cluster.zookeeper-session-timeout = 2 s",
                "fieldline.cluster.zookeeper-connection-timeout = 2 s",
                "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                    + cassandra.localDatacenter()))
        .withFallback(ConfigFactory.load())
        .resolve();
  }

  @AfterAll
  void stopCluster() throws IOException {
    for (FieldlineServer server : new FieldlineServer[] {b, a}) {
      if (server != null) {
        server.close();
      }
    }
    if (zookeeper != null) {
      zookeeper.close();
    }
  }

  private static ClusterNode node(FieldlineServer server) {
    return server.cluster().orElseThrow();
  }

  private HttpResponse<String> send(
      FieldlineServer server, String path, String bearer, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
            .header("Content-Type", "application/json");
    if (bearer != null) {
      request.header("X-Authorization", "Bearer " + bearer);
    }
    request =
        body == null ? request.DELETE() : request.POST(HttpRequest.BodyPublishers.ofString(body));
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private HttpResponse<String> replaceOnA(DeviceId device, String type, String id, String value) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("deviceId").put("entityType", "DEVICE").put("id", device.toString());
    body.put("credentialsType", type);
    body.put("credentialsId", id);
    body.put("credentialsValue", value);
    return send(a, "/api/device/credentials", token, body.toString());
  }

  private static Optional<Device> byToken(FieldlineServer server, String accessToken) {
    return server.registry().findByToken(accessToken).toCompletableFuture().join();
  }

  private static Optional<Device> byLogin(FieldlineServer server, String password) {
    return server
        .registry()
        .findByBasicCredentials(
            new MqttBasicLogin("rev-client", "rev-user", password.getBytes(StandardCharsets.UTF_8)))
        .toCompletableFuture()
        .join();
  }

  private Mqtt3BlockingClient connectToB(String clientId, String accessToken) {
    Mqtt3BlockingClient client =
        Mqtt3Client.builder()
            .identifier(clientId)
            .serverHost("127.0.0.1")
            .serverPort(b.mqttPort())
            .buildBlocking();
    client.connectWith().simpleAuth().username(accessToken).applySimpleAuth().send();
    return client;
  }

  private double revocationsSent() {
    return node(a).metrics().revocations(ClusterMetrics.RevocationOutcome.SENT);
  }

  @Test
  void should_evict_the_other_nodes_cache_and_close_its_session_when_a_token_is_replaced() {
    Device device =
        a.registry()
            .create("rev-token", "test", Optional.of("rev-old-token"))
            .toCompletableFuture()
            .join();
    Mqtt3BlockingClient client = connectToB("rev-token", "rev-old-token");
    assertThat(client.getState().isConnected()).isTrue();
    assertThat(byToken(b, "rev-old-token")).as("cached on b").isPresent();
    double sentBefore = revocationsSent();

    HttpResponse<String> replaced = replaceOnA(device.id(), "ACCESS_TOKEN", "rev-new-token", "");

    assertThat(replaced.statusCode()).isEqualTo(200);
    // A answered only once B had forgotten: nothing to wait for here.
    assertThat(byToken(b, "rev-old-token")).isEmpty();
    assertThat(byToken(b, "rev-new-token")).map(Device::id).contains(device.id());
    assertThat(revocationsSent()).isEqualTo(sentBefore + 1);
    await("b closes the old session")
        .atMost(Duration.ofSeconds(10))
        .until(() -> !client.getState().isConnected());
  }

  @Test
  void should_refuse_the_old_password_on_the_other_node_when_it_is_changed() throws IOException {
    ObjectNode request = JSON.createObjectNode();
    request.putObject("device").put("name", "rev-basic");
    request
        .putObject("credentials")
        .put("credentialsType", "MQTT_BASIC")
        .put(
            "credentialsValue",
            "{\"clientId\":\"rev-client\",\"userName\":\"rev-user\","
                + "\"password\":\"rev-old-password\"}");
    HttpResponse<String> created =
        send(a, "/api/device-with-credentials", token, request.toString());
    assertThat(created.statusCode()).isEqualTo(200);
    DeviceId device = DeviceId.parse(JSON.readTree(created.body()).at("/id/id").asText());
    assertThat(byLogin(b, "rev-old-password")).as("checked, then cached on b").isPresent();

    HttpResponse<String> replaced =
        replaceOnA(
            device,
            "MQTT_BASIC",
            "",
            "{\"clientId\":\"rev-client\",\"userName\":\"rev-user\",\"password\":\"rev-new\"}");

    assertThat(replaced.statusCode()).isEqualTo(200);
    assertThat(byLogin(b, "rev-old-password")).isEmpty();
    assertThat(byLogin(b, "rev-new")).map(Device::id).contains(device);
  }

  @Test
  void should_evict_the_other_nodes_cache_and_close_its_session_when_the_device_is_deleted() {
    Device device =
        a.registry()
            .create("rev-delete", "test", Optional.of("rev-delete-token"))
            .toCompletableFuture()
            .join();
    Mqtt3BlockingClient client = connectToB("rev-delete", "rev-delete-token");
    assertThat(byToken(b, "rev-delete-token")).isPresent();

    assertThat(send(a, "/api/device/" + device.id(), token, null).statusCode()).isEqualTo(200);

    assertThat(byToken(b, "rev-delete-token")).isEmpty();
    await("b closes the deleted device's session")
        .atMost(Duration.ofSeconds(10))
        .until(() -> !client.getState().isConnected());
  }
}
