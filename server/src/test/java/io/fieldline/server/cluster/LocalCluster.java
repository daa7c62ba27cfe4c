package io.fieldline.server.cluster;

import static org.awaitility.Awaitility.await;

import com.datastax.oss.driver.api.core.CqlSession;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cluster.HashRing;
import io.fieldline.cluster.Member;
import io.fieldline.common.DeviceId;
import io.fieldline.server.ItDriver;
import io.fieldline.server.ItKeyspace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;

/**
 * A Fieldline cluster of separate JVMs on 127.0.0.1: a real ZooKeeper (Curator {@code
 * TestingServer} in the test JVM), the module's shared Cassandra, and node processes that all
 * choose free ports (port 0) and publish the ports they bound in their ZooKeeper znode, where this
 * fixture reads them. Short timeouts so failures are detected in seconds.
 *
 * <p>{@link #standalone} is the same without ZooKeeper: each node runs on its own (cluster
 * disabled, as a single server runs), and this fixture reads its ports from its start-up banner.
 */
public final class LocalCluster implements AutoCloseable {

  static final String ADMIN = "admin@cluster.test";
  static final String PASSWORD = "cluster-password-123";
  static final Duration SESSION_TIMEOUT = Duration.ofSeconds(3);
  static final Duration REBALANCE_DELAY = Duration.ofSeconds(1);
  static final int VIRTUAL_NODES = 64;
  private static final String ROOT = "/fieldline/nodes";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final EmbeddedCassandra cassandra;
  private final String keyspace;
  private final Path workDir;
  private final @Nullable TestingServer zookeeper;
  private final @Nullable CuratorFramework reader;
  private final Map<String, String> overrides;
  private final Map<String, NodeProcess> nodes = new LinkedHashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final CqlSession cql;
  private String adminToken;

  LocalCluster(EmbeddedCassandra cassandra, Path workDir) throws Exception {
    this(cassandra, workDir, Map.of());
  }

  /**
   * A cluster whose nodes also get {@code overrides} as environment variables (e.g. {@code
   * FIELDLINE_EXPORT_LEASE}), over this fixture's own.
   */
  public LocalCluster(EmbeddedCassandra cassandra, Path workDir, Map<String, String> overrides)
      throws Exception {
    this(cassandra, workDir, overrides, true);
  }

  /** Nodes without ZooKeeper: each a single server of its own, on the shared keyspace. */
  public static LocalCluster standalone(
      EmbeddedCassandra cassandra, Path workDir, Map<String, String> overrides) throws Exception {
    return new LocalCluster(cassandra, workDir, overrides, false);
  }

  private LocalCluster(
      EmbeddedCassandra cassandra, Path workDir, Map<String, String> overrides, boolean clustered)
      throws Exception {
    this.cassandra = cassandra;
    // Migrated and emptied before the nodes start: they find it ready and start in parallel.
    this.keyspace = ItKeyspace.fresh(cassandra);
    this.workDir = workDir;
    this.overrides = Map.copyOf(overrides);
    if (clustered) {
      // 200 ms ticks: ZooKeeper accepts session timeouts down to 400 ms.
      this.zookeeper =
          new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1), true);
      this.reader =
          CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100));
      reader.start();
      reader.blockUntilConnected();
    } else {
      this.zookeeper = null;
      this.reader = null;
    }
    this.cql =
        CqlSession.builder()
            .addContactPoint(cassandra.cqlAddress())
            .withLocalDatacenter(cassandra.localDatacenter())
            .withKeyspace(keyspace)
            .withConfigLoader(ItDriver.loader())
            .build();
  }

  private Map<String, String> environment() {
    Map<String, String> env = new HashMap<>();
    if (zookeeper != null) {
      env.put("FIELDLINE_ZOOKEEPER", zookeeper.getConnectString());
      env.put("FIELDLINE_ZOOKEEPER_SESSION_TIMEOUT", SESSION_TIMEOUT.toMillis() + "ms");
      env.put("FIELDLINE_ZOOKEEPER_CONNECTION_TIMEOUT", SESSION_TIMEOUT.toMillis() + "ms");
    }
    env.put("FIELDLINE_CLUSTER_REBALANCE_DELAY", REBALANCE_DELAY.toMillis() + "ms");
    env.put("FIELDLINE_CLUSTER_VIRTUAL_NODES", Integer.toString(VIRTUAL_NODES));
    env.put("FIELDLINE_ADVERTISED_HOST", "127.0.0.1");
    env.put("FIELDLINE_GRPC_HOST", "127.0.0.1");
    env.put("FIELDLINE_GRPC_PORT", "0");
    env.put("FIELDLINE_MQTT_HOST", "127.0.0.1");
    env.put("FIELDLINE_MQTT_PORT", "0");
    env.put("FIELDLINE_HTTP_HOST", "127.0.0.1");
    env.put("FIELDLINE_HTTP_PORT", "0");
    env.put("FIELDLINE_EMBEDDED_CASSANDRA_ENABLED", "false");
    env.put(
        "FIELDLINE_CASSANDRA_CONTACT_POINTS",
        cassandra.cqlAddress().getHostString() + ":" + cassandra.cqlAddress().getPort());
    env.put("FIELDLINE_CASSANDRA_LOCAL_DATACENTER", cassandra.localDatacenter());
    env.put("FIELDLINE_CASSANDRA_KEYSPACE", keyspace);
    env.put("FIELDLINE_ADMIN_USERNAME", ADMIN);
    env.put("FIELDLINE_ADMIN_PASSWORD", PASSWORD);
    env.put("FIELDLINE_JWT_SECRET", "cluster-test-secret-shared-by-all-nodes-0123456789");
    env.put("FIELDLINE_DEMO_DEVICE_ENABLED", "false");
    env.put("FIELDLINE_WARM_UP_MESSAGES", "300");
    env.put("FIELDLINE_MQTT_WORKER_THREADS", "2");
    env.putAll(overrides);
    return env;
  }

  /**
   * Launches the nodes in parallel and returns once every one of them is ready. A node id that ran
   * before (killed or stopped) starts again on its data dir, as a restarted server does.
   */
  public List<NodeProcess> start(String... nodeIds) {
    List<NodeProcess> started = new ArrayList<>();
    for (String id : nodeIds) {
      NodeProcess node = NodeProcess.launch(id, environment(), workDir);
      nodes.put(id, node);
      started.add(node);
    }
    for (NodeProcess node : started) {
      awaitReady(node);
    }
    return started;
  }

  /** Waits for the node's znode (its ports) and for {@code /health/ready} (it claims devices). */
  void awaitReady(NodeProcess node) {
    if (reader == null) {
      await("start-up banner of " + node)
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(200))
          .failFast("process exited:\n" + node.tail(), () -> !node.isAlive())
          .until(() -> node.announced() != null);
      node.registered(node.announced());
    } else {
      await("registration of " + node)
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(200))
          .failFast("process exited:\n" + node.tail(), () -> !node.isAlive())
          .until(() -> readMember(node.nodeId()) != null);
      node.registered(readMember(node.nodeId()));
    }
    await("readiness of " + node)
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .failFast("process exited:\n" + node.tail(), () -> !node.isAlive())
        .until(() -> status(node, "/health/ready") == 200);
  }

  private @Nullable Member readMember(String nodeId) {
    if (reader == null) {
      return null;
    }
    try {
      byte[] data = reader.getData().forPath(ROOT + "/" + nodeId);
      return data == null || data.length == 0 ? null : Member.fromJson(data);
    } catch (Exception e) {
      return null;
    }
  }

  public NodeProcess node(String id) {
    return nodes.get(id);
  }

  /** Ids of the nodes whose znodes exist now. */
  List<String> registered() {
    if (reader == null) {
      return List.of();
    }
    try {
      return reader.getChildren().forPath(ROOT);
    } catch (Exception e) {
      return List.of();
    }
  }

  /** The ring every node derives from these node ids (same hash, same virtual nodes). */
  static HashRing ring(List<String> nodeIds) {
    return HashRing.of(nodeIds, VIRTUAL_NODES);
  }

  public CqlSession cql() {
    return cql;
  }

  /** A device created over REST on {@code via}; returns its id. */
  public DeviceId createDevice(NodeProcess via, String name, String accessToken) {
    HttpResponse<String> response =
        send(
            via,
            HttpRequest.newBuilder(uri(via, "/api/device?accessToken=" + accessToken))
                .header("Content-Type", "application/json")
                .header("X-Authorization", "Bearer " + adminToken(via))
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"name\":\"" + name + "\",\"type\":\"test\"}")));
    if (response.statusCode() != 200) {
      throw new IllegalStateException(
          "device creation failed: " + response.statusCode() + " " + response.body());
    }
    try {
      return DeviceId.parse(JSON.readTree(response.body()).path("id").path("id").asText());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The administrator's access token (logged in once, through {@code via}). */
  synchronized String adminToken(NodeProcess via) {
    if (adminToken == null) {
      HttpResponse<String> response =
          send(
              via,
              HttpRequest.newBuilder(uri(via, "/api/auth/login"))
                  .header("Content-Type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}")));
      try {
        JsonNode body = JSON.readTree(response.body());
        adminToken = body.path("token").asText();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return adminToken;
  }

  /** POSTs {@code body} as the admin to {@code node}. */
  public HttpResponse<String> post(NodeProcess node, String path, String body) {
    return send(
        node,
        HttpRequest.newBuilder(uri(node, path))
            .header("Content-Type", "application/json")
            .header("X-Authorization", "Bearer " + adminToken(node))
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  /** GETs {@code path} as the admin from {@code node}. */
  public HttpResponse<String> get(NodeProcess node, String path) {
    return send(
        node,
        HttpRequest.newBuilder(uri(node, path))
            .header("X-Authorization", "Bearer " + adminToken(node))
            .GET());
  }

  public int status(NodeProcess node, String path) {
    try {
      return send(
              node, HttpRequest.newBuilder(uri(node, path)).timeout(Duration.ofSeconds(5)).GET())
          .statusCode();
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /** The sum of a Prometheus metric's samples on {@code node} (all tags), or -1 if unreachable. */
  public double metric(NodeProcess node, String prometheusName) {
    String text;
    try {
      text =
          send(
                  node,
                  HttpRequest.newBuilder(uri(node, "/metrics"))
                      .timeout(Duration.ofSeconds(5))
                      .GET())
              .body();
    } catch (RuntimeException e) {
      return -1;
    }
    Matcher matcher =
        Pattern.compile("(?m)^" + Pattern.quote(prometheusName) + "(\\{[^}]*\\})? ([0-9.eE+-]+)$")
            .matcher(text);
    double sum = 0;
    boolean found = false;
    while (matcher.find()) {
      sum += Double.parseDouble(matcher.group(2));
      found = true;
    }
    return found ? sum : -1;
  }

  private static URI uri(NodeProcess node, String path) {
    return URI.create("http://127.0.0.1:" + node.httpPort() + path);
  }

  private HttpResponse<String> send(NodeProcess node, HttpRequest.Builder request) {
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Kills every node (SIGKILL), then ZooKeeper. */
  @Override
  public void close() throws IOException {
    for (NodeProcess node : nodes.values()) {
      if (node.isAlive()) {
        node.kill();
      }
    }
    cql.close();
    if (reader != null) {
      reader.close();
    }
    if (zookeeper != null) {
      zookeeper.close();
    }
  }
}
