package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.hivemq.client.mqtt.mqtt3.Mqtt3BlockingClient;
import io.fieldline.common.device.Device;
import io.fieldline.export.SinkDraft;
import io.fieldline.server.DashboardQueries.Query;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The Grafana dashboard (docker/grafana/fieldline-dashboard.json) against what a real server
 * exposes on {@code GET /metrics}: a node in cluster mode (a real ZooKeeper, Curator {@code
 * TestingServer}; a ring of one), so that the cluster meters exist too, with a device publishing
 * over MQTT (a stored message and a dead-lettered one), a WebSocket session with a subscription, an
 * update and a refused command, and a garbage collection. Every metric each dashboard query selects
 * must be a sample name of the scrape, and every label it uses must be on one of those samples (the
 * parsing is {@link DashboardQueries}, itself tested in {@link MonitoringFilesTest}).
 */
class DashboardMetricsIT extends RestTestBase {

  private static final String TELEMETRY = "v1/devices/me/telemetry";

  /**
   * The export row's meters (issue 28), registered by the export module once the composition root
   * runs it; until then no server exposes them, and the queries selecting only these are set aside.
   * The test fails as soon as one is exposed, so that this set goes with the wiring (and the test
   * then creates a sink, since the {@code sink}-tagged meters exist per sink).
   */
  private TestingServer zookeeper;

  @Override
  protected Map<String, Object> overrides() {
    try {
      // 200 ms ticks: ZooKeeper accepts session timeouts down to 400 ms.
      zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1), true);
    } catch (Exception e) {
      throw new IllegalStateException("ZooKeeper did not start", e);
    }
    return Map.of(
        "fieldline.cluster.zookeeper", zookeeper.getConnectString(),
        "fieldline.cluster.node-id", "dashboard",
        "fieldline.cluster.grpc-host", "127.0.0.1",
        "fieldline.cluster.grpc-port", 0,
        "fieldline.cluster.advertised-host", "127.0.0.1",
        "fieldline.cluster.rebalance-delay", "0 s",
        "fieldline.cluster.zookeeper-session-timeout", "2 s",
        "fieldline.cluster.zookeeper-connection-timeout", "2 s");
  }

  @Override
  @AfterAll
  protected void stopServer() {
    try {
      super.stopServer();
    } finally {
      closeZookeeper();
    }
  }

  private void closeZookeeper() {
    if (zookeeper != null) {
      try {
        zookeeper.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  @Test
  void should_expose_every_metric_and_label_the_dashboard_queries_when_a_node_has_traffic()
      throws IOException {
    await("a ring of this node")
        .atMost(Duration.ofSeconds(30))
        .until(() -> server.cluster().orElseThrow().view().ring().nodes().size() == 1);
    Device device = createDevice("dash-" + UUID.randomUUID(), "dash-" + UUID.randomUUID());
    // A sink, so that the export meters (one set per sink) exist; nothing listens at its URL.
    ObjectNode hook = new ObjectMapper().createObjectNode();
    hook.put("url", "http://127.0.0.1:9/dashboard");
    hook.put("secret", "dashboard-secret-0123456789");
    server
        .sinkAdmin()
        .orElseThrow()
        .create(new SinkDraft("dashboard", "WEBHOOK", new ObjectMapper().createObjectNode(), hook))
        .toCompletableFuture()
        .join();
    Mqtt3BlockingClient mqtt = connectedDevice(device);
    publish(mqtt, TELEMETRY, "{\"temperature\":21.5}");
    try (WsTestClient ws = WsTestClient.open(wsUri())) {
      assertThat(ws.isOpen()).isTrue();
      ws.send("{\"authCmd\":{\"cmdId\":0,\"token\":\"" + token + "\"}}");
      ws.send(
          "{\"cmds\":[{\"type\":\"TIMESERIES\",\"cmdId\":1,\"entityType\":\"DEVICE\",\"entityId\":\""
              + device.id()
              + "\",\"scope\":\"LATEST_TELEMETRY\"}]}");
      assertThat(ws.next(1).path("data").has("temperature")).isTrue();
      publish(mqtt, TELEMETRY, "{\"temperature\":22.5}");
      JsonNode update = ws.next(1);
      assertThat(update.path("data").has("temperature")).as(update.toString()).isTrue();
      // Not JSON: kept as a dead letter, acknowledged, counted as rejected{reason=payload}.
      publish(mqtt, TELEMETRY, "{temperature");
      ws.send("{not json");
      assertThat(ws.nextAny().path("errorCode").asInt()).isEqualTo(2);

      // jvm_gc_pause_seconds exists from the first collection after the meters were bound.
      System.gc();
      await("traffic counted")
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                assertThat(metric("jvm_gc_pause_seconds_count")).isPositive();
                assertThat(metric("fieldline_mqtt_deadletters_total ")).isEqualTo(1);
                assertThat(metric("fieldline_ws_updates_total ")).isPositive();
                assertThat(metric("fieldline_ws_sessions ")).isEqualTo(1);
                assertThat(scrape()).contains("fieldline_export_lag_records{");
              });
      String scrape = scrape();
      // Kept for a look (or a Prometheus to scrape) after the run.
      Files.writeString(Path.of("target", "dashboard-metrics-scrape.txt"), scrape);

      List<Query> queries = DashboardQueries.queries(read());
      Set<String> referenced = new TreeSet<>();
      queries.forEach(query -> referenced.addAll(DashboardQueries.metricNames(query.expr())));
      assertThat(referenced)
          .as("the parser finds the dashboard's metrics")
          .hasSizeGreaterThan(30)
          .contains(
              "fieldline_mqtt_ack_latency_seconds_bucket",
              "fieldline_cluster_forwarded_total",
              "fieldline_ws_sessions",
              "jvm_gc_pause_seconds_sum");
      Map<String, Set<String>> samples = DashboardQueries.samples(scrape);
      assertThat(DashboardQueries.missing(queries, samples))
          .as("dashboard queries using names that GET /metrics does not expose")
          .isEmpty();
    } finally {
      mqtt.disconnect();
    }
  }

  private static JsonNode read() {
    return DashboardQueries.read(MonitoringFilesTest.DASHBOARD);
  }

  /** GET /metrics over HTTP, as Prometheus scrapes it. */
  private String scrape() {
    HttpResponse<String> response = get("/metrics", "");
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  private URI wsUri() {
    return URI.create("ws://127.0.0.1:" + server.httpPort() + "/api/ws");
  }
}
