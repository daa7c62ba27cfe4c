package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Checks the files under {@code docker/} without a Docker engine: the services and their wiring,
 * healthchecks and stop grace periods of both compose files, HAProxy's backends, and that every
 * {@code FIELDLINE_*} variable used anywhere under {@code docker/} is documented in
 * docs/configuration.md, so that a misspelt variable (silently ignored by the server) fails the
 * build.
 */
class ComposeFilesTest {

  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path DOCKER = ROOT.resolve("docker");
  private static final Pattern VARIABLE = Pattern.compile("\\bFIELDLINE_[A-Z0-9_]*[A-Z0-9]\\b");
  private static final Pattern DOCUMENTED = Pattern.compile("`(FIELDLINE_[A-Z0-9_]+)`");
  private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|h|m|s)");

  private static final List<String> CASSANDRA_NODES =
      List.of("cassandra-1", "cassandra-2", "cassandra-3");
  private static final List<String> FIELDLINE_NODES =
      List.of("fieldline-1", "fieldline-2", "fieldline-3");

  @Test
  void should_use_only_documented_variables_when_docker_files_configure_fieldline()
      throws IOException {
    Set<String> documented = new TreeSet<>();
    Matcher doc = DOCUMENTED.matcher(Files.readString(ROOT.resolve("docs/configuration.md")));
    while (doc.find()) {
      documented.add(doc.group(1));
    }
    assertThat(documented).contains("FIELDLINE_MQTT_PORT", "FIELDLINE_CASSANDRA_CONTACT_POINTS");

    Map<String, Set<String>> used = new TreeMap<>();
    try (Stream<Path> files = Files.walk(DOCKER)) {
      for (Path file : files.filter(Files::isRegularFile).toList()) {
        Matcher matcher = VARIABLE.matcher(Files.readString(file));
        while (matcher.find()) {
          used.computeIfAbsent(matcher.group(), v -> new TreeSet<>())
              .add(DOCKER.relativize(file).toString());
        }
      }
    }
    assertThat(used).containsKeys("FIELDLINE_CASSANDRA_CONTACT_POINTS", "FIELDLINE_ADMIN_PASSWORD");

    Map<String, Set<String>> undocumented = new TreeMap<>(used);
    undocumented.keySet().removeAll(documented);
    assertThat(undocumented)
        .as(
            "variables used under docker/ (with the files using them) that docs/configuration.md"
                + " does not list")
        .isEmpty();
  }

  @Test
  void should_start_fieldline_after_a_healthy_cassandra_when_one_node_is_composed() {
    Map<String, Object> services = services("docker-compose.yml");
    assertThat(services)
        .containsOnlyKeys("cassandra", "fieldline", "prometheus", "grafana", "kafka");

    Map<String, Object> cassandra = map(services, "cassandra");
    assertThat(cassandra.get("image")).isEqualTo("cassandra:5.0");
    assertThat(environment(cassandra)).containsKeys("MAX_HEAP_SIZE", "HEAP_NEWSIZE");

    Map<String, Object> fieldline = map(services, "fieldline");
    assertThat(dependencies(fieldline)).containsEntry("cassandra", "service_healthy");
    assertThat(environment(fieldline))
        .containsEntry("FIELDLINE_CASSANDRA_CONTACT_POINTS", "cassandra:9042")
        .containsEntry("FIELDLINE_CASSANDRA_LOCAL_DATACENTER", "datacenter1")
        .containsKey("FIELDLINE_ADMIN_PASSWORD");
    assertThat(strings(fieldline.get("ports"))).contains("1883:1883", "8080:8080");
    Map<String, Object> build = map(fieldline, "build");
    assertThat(
            DOCKER
                .resolve(String.valueOf(build.get("context")))
                .resolve(String.valueOf(build.get("dockerfile")))
                .normalize())
        .isEqualTo(DOCKER.resolve("Dockerfile"));
  }

  @Test
  void should_check_health_of_every_service_when_composed() {
    for (String file : List.of("docker-compose.yml", "docker-compose.cluster.yml")) {
      services(file)
          .forEach(
              (name, service) -> {
                Map<String, Object> healthcheck = map(asMap(service), "healthcheck");
                List<String> test = strings(healthcheck.get("test"));
                assertThat(test).as("%s: %s healthcheck", file, name).hasSizeGreaterThan(1);
                assertThat(test.get(0))
                    .as("%s: %s healthcheck", file, name)
                    .isIn("CMD", "CMD-SHELL");
                assertThat(healthcheck.get("disable")).as("%s: %s", file, name).isNotEqualTo(true);
              });
    }
  }

  @Test
  void should_give_fieldline_time_to_drain_when_a_container_stops() {
    Map<String, Map<String, Object>> nodes = new LinkedHashMap<>();
    nodes.put("fieldline", map(services("docker-compose.yml"), "fieldline"));
    Map<String, Object> cluster = services("docker-compose.cluster.yml");
    FIELDLINE_NODES.forEach(name -> nodes.put(name, map(cluster, name)));
    nodes.forEach(
        (name, node) -> {
          // The shutdown drain alone may take fieldline.actors.shutdown-timeout (30 s) + 5 s.
          assertThat(duration(node.get("stop_grace_period")))
              .as(name)
              .isGreaterThanOrEqualTo(Duration.ofSeconds(40));
          // One descriptor per device connection, above the default 15 000-connection limit.
          Map<String, Object> nofile = map(map(node, "ulimits"), "nofile");
          assertThat(((Number) nofile.get("soft")).intValue()).as(name).isGreaterThan(16_384);
          assertThat(strings(node.get("volumes")))
              .as(name)
              .anyMatch(volume -> volume.endsWith(":/var/lib/fieldline"));
        });
  }

  @Test
  void should_join_three_cassandra_nodes_through_one_seed_when_clustered() {
    Map<String, Object> services = services("docker-compose.cluster.yml");
    Set<String> seeds = new TreeSet<>();
    Set<String> dataCenters = new TreeSet<>();
    for (String name : CASSANDRA_NODES) {
      Map<String, Object> node = map(services, name);
      assertThat(node.get("image")).as(name).isEqualTo("cassandra:5.0");
      Map<String, String> env = environment(node);
      assertThat(env)
          .as(name)
          .containsEntry("CASSANDRA_ENDPOINT_SNITCH", "GossipingPropertyFileSnitch")
          .containsKeys("MAX_HEAP_SIZE", "HEAP_NEWSIZE");
      seeds.add(env.get("CASSANDRA_SEEDS"));
      dataCenters.add(env.get("CASSANDRA_DC"));
    }
    assertThat(seeds).containsExactly("cassandra-1");
    assertThat(dataCenters).hasSize(1).doesNotContainNull();
    // Cassandra refuses to bootstrap two nodes at once: each joins after the previous one.
    assertThat(dependencies(map(services, "cassandra-2")))
        .containsExactly(Map.entry("cassandra-1", "service_healthy"));
    assertThat(dependencies(map(services, "cassandra-3")))
        .containsExactly(Map.entry("cassandra-2", "service_healthy"));
    assertThat(String.valueOf(map(services, "zookeeper").get("image"))).startsWith("zookeeper:");
  }

  @Test
  void should_run_three_distinct_fieldline_nodes_on_shared_storage_when_clustered() {
    Map<String, Object> services = services("docker-compose.cluster.yml");
    String dataCenter = environment(map(services, "cassandra-1")).get("CASSANDRA_DC");
    Set<String> nodeIds = new TreeSet<>();
    Set<String> secrets = new TreeSet<>();
    List<String> migrators = new ArrayList<>();
    for (String name : FIELDLINE_NODES) {
      Map<String, Object> node = map(services, name);
      Map<String, String> env = environment(node);
      nodeIds.add(env.get("FIELDLINE_NODE_ID"));
      assertThat(env)
          .as(name)
          .containsEntry("FIELDLINE_ADVERTISED_HOST", name)
          .containsEntry("FIELDLINE_ZOOKEEPER", "zookeeper:2181")
          .containsEntry("FIELDLINE_CASSANDRA_LOCAL_DATACENTER", dataCenter)
          .containsEntry("FIELDLINE_CASSANDRA_WRITE_CONSISTENCY", "LOCAL_QUORUM");
      assertThat(env.get("FIELDLINE_CASSANDRA_CONTACT_POINTS").split(","))
          .as(name)
          .containsExactlyInAnyOrder("cassandra-1:9042", "cassandra-2:9042", "cassandra-3:9042");
      assertThat(env.get("FIELDLINE_CASSANDRA_REPLICATION").replace(" ", ""))
          .as(name)
          .contains("'class':'NetworkTopologyStrategy'", "'" + dataCenter + "':3");
      secrets.add(env.get("FIELDLINE_ADMIN_PASSWORD") + " " + env.get("FIELDLINE_JWT_SECRET"));
      if ("true".equals(env.get("FIELDLINE_CASSANDRA_CREATE_SCHEMA"))) {
        migrators.add(name);
      }
      Map<String, String> needs = dependencies(node);
      assertThat(needs).as(name).containsEntry("zookeeper", "service_healthy");
      CASSANDRA_NODES.forEach(
          cassandra -> assertThat(needs).as(name).containsEntry(cassandra, "service_healthy"));
    }
    assertThat(nodeIds).containsExactlyInAnyOrderElementsOf(FIELDLINE_NODES);
    // Tokens signed by one node are checked by whichever node the load balancer picks next.
    assertThat(secrets).hasSize(1);
    // One migrator on a fresh cluster; the others start once its schema is in place.
    assertThat(migrators).hasSize(1);
    FIELDLINE_NODES.stream()
        .filter(name -> !migrators.contains(name))
        .forEach(
            name ->
                assertThat(dependencies(map(services, name)))
                    .as(name)
                    .containsEntry(migrators.get(0), "service_healthy"));
  }

  @Test
  void should_balance_mqtt_and_http_over_the_three_nodes_when_haproxy_fronts_the_cluster()
      throws IOException {
    Map<String, Object> haproxy = map(services("docker-compose.cluster.yml"), "haproxy");
    assertThat(String.valueOf(haproxy.get("image"))).startsWith("haproxy:");
    assertThat(strings(haproxy.get("ports"))).contains("1883:1883", "8080:8080");
    assertThat(strings(haproxy.get("volumes")))
        .contains("./haproxy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro");

    Map<String, List<String>> sections = haproxySections(DOCKER.resolve("haproxy/haproxy.cfg"));
    List<String> mqtt = backendBoundTo(sections, ":1883");
    assertThat(mqtt).contains("mode tcp", "balance leastconn", "option httpchk");
    assertThat(mqtt).anyMatch(ComposeFilesTest::checksReadiness);
    assertThat(servers(mqtt))
        .containsExactly(
            "fieldline-1 fieldline-1:1883 check port 8080",
            "fieldline-2 fieldline-2:1883 check port 8080",
            "fieldline-3 fieldline-3:1883 check port 8080");

    List<String> http = backendBoundTo(sections, ":8080");
    assertThat(http).contains("mode http", "option httpchk");
    assertThat(http).anyMatch(ComposeFilesTest::checksReadiness);
    assertThat(servers(http))
        .containsExactly(
            "fieldline-1 fieldline-1:8080 check",
            "fieldline-2 fieldline-2:8080 check",
            "fieldline-3 fieldline-3:8080 check");
  }

  @Test
  void should_run_the_server_as_non_root_with_external_cassandra_when_the_image_is_built()
      throws IOException {
    String dockerfile = Files.readString(DOCKER.resolve("Dockerfile"));
    assertThat(dockerfile)
        .contains(
            "EXPOSE 1883 8080 9090",
            "FIELDLINE_EMBEDDED_CASSANDRA_ENABLED=false",
            "FIELDLINE_DATA_DIR=/var/lib/fieldline",
            "VOLUME [\"/var/lib/fieldline\"]",
            "HEALTHCHECK",
            "COPY --chmod=0755 docker/entrypoint.sh ",
            "COPY --chmod=0755 docker/healthcheck.sh ")
        .containsPattern("(?m)^USER \\$\\{APP_UID}:\\$\\{APP_UID}$")
        .containsPattern("(?m)^ARG APP_UID=[1-9][0-9]*$");
    assertThat(Files.readString(DOCKER.resolve("entrypoint.sh")))
        .contains("exec java ", Main.class.getName());
    assertThat(Files.readString(DOCKER.resolve("healthcheck.sh"))).contains("/health/ready");
  }

  // ---- helpers ----

  private static Map<String, Object> services(String composeFile) {
    try {
      Object document =
          new Yaml(new SafeConstructor(new LoaderOptions()))
              .load(Files.readString(DOCKER.resolve(composeFile)));
      return map(asMap(document), "services");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asMap(Object value) {
    assertThat(value).isInstanceOf(Map.class);
    return (Map<String, Object>) value;
  }

  private static Map<String, Object> map(Map<String, Object> parent, String key) {
    assertThat(parent).containsKey(key);
    return asMap(parent.get(key));
  }

  private static List<String> strings(Object list) {
    assertThat(list).isInstanceOf(List.class);
    return ((List<?>) list).stream().map(String::valueOf).toList();
  }

  /** The environment as a map (the list form is not used in these files). */
  private static Map<String, String> environment(Map<String, Object> service) {
    return map(service, "environment").entrySet().stream()
        .collect(Collectors.toMap(Map.Entry::getKey, e -> String.valueOf(e.getValue())));
  }

  /** depends_on as service name to condition. */
  private static Map<String, String> dependencies(Map<String, Object> service) {
    Map<String, String> conditions = new TreeMap<>();
    map(service, "depends_on")
        .forEach(
            (name, spec) -> conditions.put(name, String.valueOf(asMap(spec).get("condition"))));
    return conditions;
  }

  /** A compose duration such as "60s" or "1m30s". */
  private static Duration duration(Object value) {
    String text = String.valueOf(value);
    assertThat(text).matches("(\\d+(ms|h|m|s))+");
    Duration total = Duration.ZERO;
    Matcher part = DURATION_PART.matcher(text);
    while (part.find()) {
      long amount = Long.parseLong(part.group(1));
      total =
          total.plus(
              switch (part.group(2)) {
                case "h" -> Duration.ofHours(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "s" -> Duration.ofSeconds(amount);
                default -> Duration.ofMillis(amount);
              });
    }
    return total;
  }

  /** haproxy.cfg as section header ("frontend mqtt") to its lines, comments and blanks removed. */
  private static Map<String, List<String>> haproxySections(Path cfg) throws IOException {
    Map<String, List<String>> sections = new LinkedHashMap<>();
    List<String> current = null;
    for (String raw : Files.readAllLines(cfg)) {
      String line = raw.replaceFirst("\\s*#.*$", "");
      if (line.isBlank()) {
        continue;
      }
      if (!Character.isWhitespace(line.charAt(0))) {
        current = new ArrayList<>();
        sections.put(line.trim().replaceAll("\\s+", " "), current);
      } else {
        assertThat(current).as("line outside a section: %s", raw).isNotNull();
        current.add(line.trim().replaceAll("\\s+", " "));
      }
    }
    return sections;
  }

  /** The lines of the backend that the frontend binding {@code address} sends its traffic to. */
  private static List<String> backendBoundTo(Map<String, List<String>> sections, String address) {
    List<String> frontend =
        sections.entrySet().stream()
            .filter(section -> section.getKey().startsWith("frontend "))
            .map(Map.Entry::getValue)
            .filter(lines -> lines.contains("bind " + address))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no frontend binds " + address));
    String backend =
        frontend.stream()
            .filter(line -> line.startsWith("default_backend "))
            .map(line -> line.substring("default_backend ".length()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no default_backend for " + address));
    assertThat(sections).containsKey("backend " + backend);
    return sections.get("backend " + backend);
  }

  private static boolean checksReadiness(String line) {
    return line.startsWith("http-check send") && line.contains("uri /health/ready");
  }

  private static List<String> servers(List<String> backend) {
    return backend.stream()
        .filter(line -> line.startsWith("server "))
        .map(line -> line.substring("server ".length()))
        .toList();
  }

  @Test
  void should_run_prometheus_and_grafana_only_in_the_monitoring_profile_when_composed() {
    Map<String, String> scrapeConfigs =
        Map.of(
            "docker-compose.yml", "./prometheus/prometheus.yml",
            "docker-compose.cluster.yml", "./prometheus/prometheus-cluster.yml");
    scrapeConfigs.forEach(
        (file, scrapeConfig) -> {
          Map<String, Object> services = services(file);
          Map<String, Object> prometheus = map(services, "prometheus");
          Map<String, Object> grafana = map(services, "grafana");
          assertThat(strings(prometheus.get("profiles"))).as(file).containsExactly("monitoring");
          assertThat(strings(grafana.get("profiles"))).as(file).containsExactly("monitoring");
          assertThat(strings(prometheus.get("volumes")))
              .as(file)
              .contains(scrapeConfig + ":/etc/prometheus/prometheus.yml:ro");
          assertThat(strings(grafana.get("volumes")))
              .as(file)
              .contains(
                  "./grafana/provisioning:/etc/grafana/provisioning:ro",
                  "./grafana/fieldline-dashboard.json"
                      + ":/var/lib/grafana/dashboards/fieldline-dashboard.json:ro");
          // Monitoring is optional: every other service starts without the profile.
          services.forEach(
              (name, service) -> {
                if (name.equals("kafka")) {
                  // Kafka for a KAFKA sink is optional too, in a profile of its own.
                  assertThat(strings(asMap(service).get("profiles")))
                      .as("%s: %s", file, name)
                      .containsExactly("kafka");
                } else if (!name.equals("prometheus") && !name.equals("grafana")) {
                  assertThat(asMap(service)).as("%s: %s", file, name).doesNotContainKey("profiles");
                }
              });
        });
  }
}
