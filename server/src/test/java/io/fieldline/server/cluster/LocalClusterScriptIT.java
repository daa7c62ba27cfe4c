package io.fieldline.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hivemq.client.mqtt.datatypes.MqttQos;
import com.hivemq.client.mqtt.mqtt3.Mqtt3AsyncClient;
import com.hivemq.client.mqtt.mqtt3.Mqtt3Client;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code scripts/local-cluster.sh} as a user runs it: {@code start 3} (a real ZooKeeper, one
 * embedded Cassandra, three Fieldline nodes as processes on 127.0.0.1, on a block of free ports
 * below the ephemeral range), its {@code node=ID pid=PID mqtt=PORT http=PORT grpc=PORT} lines, a
 * device provisioned over REST and QoS 1 telemetry published through each node, then {@code stop},
 * after which none of the processes it started is left. Data, pid files and logs go to {@code
 * target/local-cluster-it/cluster}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalClusterScriptIT {

  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path SCRIPT = ROOT.resolve("scripts").resolve("local-cluster.sh");
  private static final Path WORK = Path.of("target", "local-cluster-it").toAbsolutePath();
  private static final Path BASE = WORK.resolve("cluster");
  private static final String ADMIN = "admin@fieldline.local"; // the script's default user
  private static final String PASSWORD = "script-it-password-123";
  private static final int NODES = 3;
  private static final Duration START_TIMEOUT = Duration.ofMinutes(6);
  private static final Duration STOP_TIMEOUT = Duration.ofMinutes(5);
  private static final Pattern NODE_LINE =
      Pattern.compile("node=(\\S+) pid=(\\d+) mqtt=(\\d+) http=(\\d+) grpc=(\\d+)");
  private static final Pattern CASSANDRA_LINE =
      Pattern.compile("(?m)^cassandra cql=\\S+ pid=(\\d+)$");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** Every process the cluster consists of, killed by the reaper if the JVM exits before stop. */
  private static final Set<Long> STARTED = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () ->
                    STARTED.forEach(
                        pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly)),
                "local-cluster-reaper"));
  }

  private record Node(String id, long pid, int mqtt, int http, int grpc) {}

  private record Run(int exitCode, String out, String err) {}

  private int firstPort;
  private final List<Node> nodes = new ArrayList<>();
  private boolean stopped;

  @BeforeAll
  void startCluster() throws Exception {
    assertThat(run("stop", STOP_TIMEOUT, "stop").exitCode())
        .as("stop of an earlier run's leftovers")
        .isZero();
    deleteRecursively(BASE);
    Files.createDirectories(WORK);
    markClasspathFresh();
    firstPort = freePortBlock(2 + 3 * NODES);

    Run start = run("start", START_TIMEOUT, "start", Integer.toString(NODES));
    rememberInfrastructurePids();
    assertThat(start.exitCode()).as("start failed:\n%s", start.err()).isZero();
    Matcher line = NODE_LINE.matcher("");
    for (String text : start.out().strip().split("\n")) {
      assertThat(line.reset(text).matches()).as("line '%s' of:\n%s", text, start.out()).isTrue();
      Node node =
          new Node(
              line.group(1),
              Long.parseLong(line.group(2)),
              Integer.parseInt(line.group(3)),
              Integer.parseInt(line.group(4)),
              Integer.parseInt(line.group(5)));
      nodes.add(node);
      STARTED.add(node.pid());
    }
  }

  @Test
  @Order(1)
  void should_print_one_line_per_ready_node_when_three_nodes_are_started() {
    assertThat(nodes).hasSize(NODES);
    int mqtt = firstPort + 2;
    for (int i = 0; i < NODES; i++) {
      Node node = nodes.get(i);
      assertThat(node)
          .isEqualTo(
              new Node(
                  "node-" + (i + 1), node.pid(), mqtt + i, mqtt + NODES + i, mqtt + 2 * NODES + i));
      assertThat(running(node.pid())).as("%s is running", node).isTrue();
    }
    // Each node derives the same three-node ring from ZooKeeper (after the rebalance delay).
    await("rings of three nodes")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .until(
            () ->
                nodes.stream()
                    .allMatch(node -> metric(node, "fieldline_cluster_ring_nodes") == NODES));
  }

  @Test
  @Order(2)
  void should_store_telemetry_published_through_each_node_when_a_device_is_provisioned_on_one()
      throws Exception {
    String login = "{\"username\":\"" + ADMIN + "\",\"password\":\"" + PASSWORD + "\"}";
    String token = body(http(nodes.get(0), "/api/auth/login", null, login)).path("token").asText();
    String device = "{\"name\":\"script-it\",\"type\":\"test\"}";
    String deviceId =
        body(http(nodes.get(0), "/api/device?accessToken=script-it-token", token, device))
            .path("id")
            .path("id")
            .asText();

    long base = 1_700_900_000_000L;
    Map<Long, String> sent = new TreeMap<>();
    for (int i = 0; i < NODES; i++) {
      String temperature = "2" + i + ".5";
      String values = "{\"temperature\":" + temperature + "}";
      publishThrough(nodes.get(i), "{\"ts\":" + (base + i) + ",\"values\":" + values + "}");
      sent.put(base + i, temperature);
    }

    // Read back through the last node with the first node's token (the script gives every node
    // the same signing key).
    String history =
        "/api/plugins/telemetry/DEVICE/"
            + deviceId
            + "/values/timeseries?keys=temperature&startTs="
            + base
            + "&endTs="
            + (base + NODES);
    Map<Long, String> stored = new TreeMap<>();
    body(http(nodes.get(NODES - 1), history, token, null))
        .path("temperature")
        .forEach(point -> stored.put(point.path("ts").asLong(), point.path("value").asText()));
    assertThat(stored).as("history of device %s", deviceId).isEqualTo(sent);
    // The device has one owner: what reached the two other nodes was forwarded to it.
    double forwarded = 0;
    for (Node node : nodes) {
      forwarded += metric(node, "fieldline_cluster_forwarded_total");
    }
    assertThat(forwarded).isEqualTo(NODES - 1);
  }

  /** One QoS 1 message as the device, through {@code node}, asserting its PUBACK. */
  private static void publishThrough(Node node, String payload) throws Exception {
    Mqtt3AsyncClient client =
        Mqtt3Client.builder()
            .identifier("script-it-" + node.id())
            .serverHost("127.0.0.1")
            .serverPort(node.mqtt())
            .buildAsync();
    assertThat(
            client.connectWith().simpleAuth().username("script-it-token").applySimpleAuth().send())
        .as("CONNACK from %s", node)
        .succeedsWithin(Duration.ofSeconds(20));
    // The QoS 1 publish completes when its PUBACK has arrived, i.e. after the owner's write.
    assertThat(
            client
                .publishWith()
                .topic("v1/devices/me/telemetry")
                .qos(MqttQos.AT_LEAST_ONCE)
                .payload(payload.getBytes(StandardCharsets.UTF_8))
                .send())
        .as("PUBACK through %s", node)
        .succeedsWithin(Duration.ofSeconds(30));
    client.disconnect().get(10, TimeUnit.SECONDS);
  }

  @Test
  @Order(3)
  void should_leave_no_process_running_when_stopped() throws Exception {
    assertThat(STARTED).as("nodes, ZooKeeper, Cassandra launcher and Cassandra").hasSize(NODES + 3);
    stopAndCheck();
  }

  @AfterAll
  void stopCluster() throws Exception {
    if (!stopped) {
      stopAndCheck();
    }
  }

  private void stopAndCheck() throws Exception {
    Run stop = run("stop", STOP_TIMEOUT, "stop");
    stopped = true;
    assertThat(stop.exitCode()).as("stop failed:\n%s", stop.err()).isZero();
    // A stopped process may stay a zombie until init reaps it: that counts as gone.
    await("every process of the cluster gone")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> STARTED.stream().noneMatch(LocalClusterScriptIT::running));
    assertThat(run("status", Duration.ofSeconds(30), "status").out()).isEmpty();
    STARTED.clear();
  }

  /** ZooKeeper, the Cassandra launcher and its Cassandra JVM, from the script's files. */
  private void rememberInfrastructurePids() throws IOException {
    for (String pidFile : List.of("zookeeper.pid", "cassandra.pid")) {
      Path file = BASE.resolve(pidFile);
      if (Files.exists(file)) {
        STARTED.add(Long.parseLong(Files.readString(file).strip()));
      }
    }
    Path launcherLog = BASE.resolve("cassandra").resolve("launcher.log");
    if (Files.exists(launcherLog)) {
      Matcher cassandra = CASSANDRA_LINE.matcher(Files.readString(launcherLog));
      if (cassandra.find()) {
        STARTED.add(Long.parseLong(cassandra.group(1)));
      }
    }
  }

  /**
   * Runs the script with a bounded wait; stdout and stderr go to files under {@code WORK}. Only
   * this test's settings reach it: no inherited {@code FIELDLINE_*} or {@code JAVA_OPTS}.
   */
  private Run run(String name, Duration timeout, String... args) throws Exception {
    Path out = WORK.resolve(name + ".out");
    Path err = WORK.resolve(name + ".err");
    Files.createDirectories(WORK);
    List<String> command = new ArrayList<>(List.of(SCRIPT.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(ROOT.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(key -> key.startsWith("FIELDLINE_") || key.equals("JAVA_OPTS"));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("FIELDLINE_DATA_DIR", BASE.toString());
    env.put("FIELDLINE_ADMIN_PASSWORD", PASSWORD);
    env.put("FIELDLINE_ZOOKEEPER_PORT", Integer.toString(firstPort));
    env.put("FIELDLINE_CASSANDRA_CQL_PORT", Integer.toString(firstPort + 1));
    env.put("FIELDLINE_MQTT_PORT", Integer.toString(firstPort + 2));
    env.put("FIELDLINE_HTTP_PORT", Integer.toString(firstPort + 2 + NODES));
    env.put("FIELDLINE_GRPC_PORT", Integer.toString(firstPort + 2 + 2 * NODES));
    env.put("FIELDLINE_CASSANDRA_PROFILE", "TEST");
    env.put("FIELDLINE_CASSANDRA_HEAP", "512M");
    env.put("FIELDLINE_MQTT_WORKER_THREADS", "2");
    env.put("JAVA_OPTS", "-Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -ea");
    Process process = builder.start();
    if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      // Only the script itself: what it started is stopped by the next `stop`.
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError(
          "local-cluster.sh "
              + String.join(" ", args)
              + " did not finish within "
              + timeout
              + ":\n"
              + Files.readString(err));
    }
    return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
  }

  /**
   * The script rebuilds (nested {@code mvn install}) when a source file is newer than {@code
   * server.classpath}; the dependency plugin rewrites that file only when the classpath changed, so
   * after an edit it is older than the sources although this build has just compiled them.
   */
  private static void markClasspathFresh() throws IOException {
    for (String file :
        List.of(
            "server/target/server.classpath",
            "cluster/target/zookeeper.classpath",
            "cassandra-embedded/runtime/target/cassandra.classpath")) {
      assertThat(ROOT.resolve(file)).as("built by mvn verify before this test").isRegularFile();
    }
    Files.setLastModifiedTime(
        ROOT.resolve("server/target/server.classpath"),
        FileTime.fromMillis(System.currentTimeMillis()));
  }

  /**
   * The first of {@code count} consecutive ports that are free on 127.0.0.1, below Linux's
   * ephemeral range (32768 and up), so no outgoing connection takes one before the script binds it.
   */
  private static int freePortBlock(int count) {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    for (int attempt = 0; attempt < 50; attempt++) {
      int first = ThreadLocalRandom.current().nextInt(20_000, 32_000 - count);
      boolean free = true;
      for (int port = first; port < first + count && free; port++) {
        try (ServerSocket socket = new ServerSocket()) {
          socket.setReuseAddress(false);
          socket.bind(new InetSocketAddress(loopback, port));
        } catch (IOException e) {
          free = false;
        }
      }
      if (free) {
        return first;
      }
    }
    throw new IllegalStateException("no block of " + count + " free ports in 20000-32000");
  }

  /** Alive and not yet exited: a zombie (exited, not reaped) or a missing process is not. */
  private static boolean running(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      char state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state != 'Z' && state != 'X';
    } catch (IOException e) {
      return false;
    }
  }

  private static HttpResponse<String> http(
      Node node, String path, @Nullable String token, @Nullable String json)
      throws IOException, InterruptedException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.http() + path))
            .timeout(Duration.ofSeconds(10));
    if (token != null) {
      request.header("X-Authorization", "Bearer " + token);
    }
    if (json != null) {
      request
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(json));
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private static JsonNode body(HttpResponse<String> response) throws IOException {
    assertThat(response.statusCode()).as("%s: %s", response.uri(), response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  /** A Prometheus sample without tags on {@code node}'s {@code /metrics}, or -1. */
  private static double metric(Node node, String name) {
    try {
      Matcher sample =
          Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{\\})? ([0-9.eE+-]+)$")
              .matcher(http(node, "/metrics", null, null).body());
      return sample.find() ? Double.parseDouble(sample.group(1)) : -1;
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    }
  }
}
