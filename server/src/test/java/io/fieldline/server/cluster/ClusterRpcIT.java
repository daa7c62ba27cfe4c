package io.fieldline.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.cluster.HashRing;
import io.fieldline.common.DeviceId;
import io.fieldline.server.PahoDevice;
import io.fieldline.server.WsTestClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The two-way device API across a cluster of three processes: REST calls on one node, the device
 * connected to a second node that is not its owner (the third): server-side RPC, persistent RPC
 * delivered by the owner when the device subscribes elsewhere, shared-attribute pushes; and the
 * node holding the device's session killed in the middle of a call; live data over the WebSocket
 * API on a node that neither holds the session nor stores the data, through the loss of the node
 * that does.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRpcIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  private LocalCluster cluster;
  private NodeProcess n1;
  private NodeProcess n2;
  private NodeProcess n3;

  @BeforeAll
  void startCluster() throws Exception {
    Path work = Files.createDirectories(Path.of("target", "cluster-rpc-it").toAbsolutePath());
    cluster = new LocalCluster(SharedCassandra.get(), work);
    List<NodeProcess> nodes = cluster.start("n1", "n2", "n3");
    n1 = nodes.get(0);
    n2 = nodes.get(1);
    n3 = nodes.get(2);
    await("rings of 3")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                nodes.stream()
                    .allMatch(node -> cluster.metric(node, "fieldline_cluster_ring_nodes") == 3));
  }

  @AfterAll
  void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A new device whose owner is {@code owner}, and its access token. */
  private record Provisioned(DeviceId id, String token) {}

  private Provisioned deviceOwnedBy(String owner) {
    HashRing ring = LocalCluster.ring(List.of("n1", "n2", "n3"));
    while (true) {
      String name = "c-rpc-" + UUID.randomUUID();
      DeviceId id = cluster.createDevice(n1, name, name);
      if (owner.equals(ring.ownerOf(id))) {
        return new Provisioned(id, name);
      }
    }
  }

  private static JsonNode json(HttpResponse<String> response) {
    try {
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(response.statusCode() + " " + response.body(), e);
    }
  }

  @Test
  @Order(1)
  void rpcAndPushesReachADeviceConnectedToANodeThatDoesNotOwnIt() throws Exception {
    Provisioned device = deviceOwnedBy("n3");
    try (PahoDevice paho =
        new PahoDevice(n2.mqttPort(), device.token(), true)
            .subscribe("v1/devices/me/attributes", 1)
            .answering(1, (topic, request) -> "{\"via\":\"n2\"}")) {
      HttpResponse<String> answer =
          cluster.post(n1, "/api/rpc/twoway/" + device.id(), "{\"method\":\"where\"}");
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(json(answer)).isEqualTo(JSON.readTree("{\"via\":\"n2\"}"));

      assertThat(
              cluster
                  .post(
                      n1,
                      "/api/plugins/telemetry/DEVICE/" + device.id() + "/attributes/SHARED_SCOPE",
                      "{\"interval\":15}")
                  .statusCode())
          .isEqualTo(200);
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> paho.on("v1/devices/me/attributes").size() == 1);
      assertThat(JSON.readTree(paho.on("v1/devices/me/attributes").get(0).payload()))
          .isEqualTo(JSON.readTree("{\"interval\":15}"));
    }
  }

  @Test
  @Order(2)
  void persistentRequestTakenOnOneNodeIsDeliveredWhenTheDeviceSubscribesOnAnother()
      throws Exception {
    Provisioned device = deviceOwnedBy("n3");
    String rpcId =
        json(cluster.post(
                n1,
                "/api/rpc/twoway/" + device.id(),
                "{\"method\":\"later\",\"persistent\":true,\"expirationTime\":"
                    + (System.currentTimeMillis() + 60_000)
                    + "}"))
            .get("rpcId")
            .asText();

    try (PahoDevice paho =
        new PahoDevice(n2.mqttPort(), device.token(), true)
            .answering(1, (topic, request) -> "{\"done\":true}")) {
      awaitSuccessful(rpcId, Duration.ofSeconds(10));
      assertThat(paho.on(PahoDevice.RPC_REQUEST_PREFIX)).hasSize(1);
    }
  }

  @Test
  @Order(3)
  void aCallWhoseSessionNodeIsKilledAnswersAtItsDeadlineAndAPersistentOneIsDeliveredElsewhere()
      throws Exception {
    Provisioned device = deviceOwnedBy("n2");
    PahoDevice onN3 =
        new PahoDevice(n3.mqttPort(), device.token(), true).answering(1, (topic, request) -> null);
    String rpcId =
        json(cluster.post(
                n1,
                "/api/rpc/oneway/" + device.id(),
                "{\"method\":\"afterFailover\",\"persistent\":true,\"expirationTime\":"
                    + (System.currentTimeMillis() + 120_000)
                    + "}"))
            .get("rpcId")
            .asText();
    awaitSuccessful(rpcId, Duration.ofSeconds(10));

    long start = System.nanoTime();
    CompletableFuture<HttpResponse<String>> call =
        CompletableFuture.supplyAsync(
            () ->
                cluster.post(
                    n1, "/api/rpc/twoway/" + device.id(), "{\"method\":\"m\",\"timeout\":4000}"));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> onN3.on(PahoDevice.RPC_REQUEST_PREFIX).size() == 2);
    n3.kill();

    HttpResponse<String> answer = call.get();
    assertThat(answer.statusCode()).isEqualTo(504);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
    onN3.close();

    // A persistent request queued while the device is away reaches it on the survivor it
    // reconnects to.
    String queued =
        json(cluster.post(
                n1,
                "/api/rpc/oneway/" + device.id(),
                "{\"method\":\"queued\",\"persistent\":true,\"expirationTime\":"
                    + (System.currentTimeMillis() + 120_000)
                    + "}"))
            .get("rpcId")
            .asText();
    try (PahoDevice onN2 =
        new PahoDevice(n2.mqttPort(), device.token(), true)
            .answering(1, (topic, request) -> null)) {
      awaitSuccessful(queued, Duration.ofSeconds(20));
      assertThat(onN2.on(PahoDevice.RPC_REQUEST_PREFIX)).isNotEmpty();
    }
  }

  @Test
  @Order(4)
  void liveDataReachesASubscriptionOnANodeThatNeitherHoldsTheSessionNorStoresTheData()
      throws Exception {
    n3 = cluster.start("n3").get(0); // killed by the previous test: three nodes again
    await("rings of 3 again")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                List.of(n1, n2, n3).stream()
                    .allMatch(node -> cluster.metric(node, "fieldline_cluster_ring_nodes") == 3));
    Provisioned device = deviceOwnedBy("n3");
    try (PahoDevice onN2 = new PahoDevice(n2.mqttPort(), device.token(), true);
        WsTestClient onN1 =
            WsTestClient.open(URI.create("ws://127.0.0.1:" + n1.httpPort() + "/api/ws"))) {
      onN1.send(
          "{\"authCmd\":{\"cmdId\":0,\"token\":\""
              + cluster.adminToken(n1)
              + "\"},\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"entityType\":\"DEVICE\","
              + "\"entityId\":\""
              + device.id()
              + "\",\"keys\":\"v\"}]}");
      assertThat(onN1.next(1).path("data").path("v").size()).as("no value yet").isZero();

      // Forwarded by n2 to the owner n3, stored there, published from there to n1.
      onN2.publish("v1/devices/me/telemetry", "{\"v\":1}");
      assertThat(onN1.next(1).path("data").path("v").get(0).get(1).asText()).isEqualTo("1");

      // The owner dies: the device's new owner knew of n1's watch and publishes from then on.
      n3.kill();
      await("rings of 2")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(250))
          .until(
              () ->
                  List.of(n1, n2).stream()
                      .allMatch(node -> cluster.metric(node, "fieldline_cluster_ring_nodes") == 2));
      await("a value stored by the new owner")
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .untilAsserted(() -> onN2.publish("v1/devices/me/telemetry", "{\"v\":2}"));
      assertThat(onN1.next(1).path("data").path("v").get(0).get(1).asText()).isEqualTo("2");
    }
  }

  private void awaitSuccessful(String rpcId, Duration within) {
    await()
        .atMost(within)
        .until(
            () ->
                json(cluster.get(n1, "/api/rpc/persistent/" + rpcId))
                    .get("status")
                    .asText()
                    .equals("SUCCESSFUL"));
  }
}
