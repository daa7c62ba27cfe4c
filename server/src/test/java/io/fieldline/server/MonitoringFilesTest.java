package io.fieldline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.server.DashboardQueries.Query;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Checks the monitoring files under {@code docker/} without a server: the Grafana dashboard's
 * structure (templated data source, node variable, every query filtered by node), the Prometheus
 * scrape configurations against the Fieldline services of the compose files, Grafana's
 * provisioning, and the query parsing that {@link DashboardMetricsIT} relies on to compare the
 * dashboard with a real scrape.
 */
class MonitoringFilesTest {

  private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  private static final Path DOCKER = ROOT.resolve("docker");
  static final Path DASHBOARD = DOCKER.resolve("grafana/fieldline-dashboard.json");
  private static final String DATASOURCE = "${DS_PROMETHEUS}";
  private static final String FIELDLINE_IMAGE = "fieldline:local";

  @Test
  void should_query_the_templated_datasource_for_the_chosen_nodes_when_a_panel_is_drawn() {
    JsonNode dashboard = DashboardQueries.read(DASHBOARD);
    List<String> variables = new ArrayList<>();
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      variables.add(variable.path("name").asText() + ":" + variable.path("type").asText());
    }
    assertThat(variables).containsExactly("DS_PROMETHEUS:datasource", "instance:query");
    assertThat(dashboard.path("uid").asText()).isNotBlank();

    List<JsonNode> panels = DashboardQueries.panels(dashboard);
    assertThat(panels).hasSizeBetween(15, 30);
    Set<Integer> ids = new HashSet<>();
    List<String> problems = new ArrayList<>();
    for (JsonNode panel : panels) {
      String title = panel.path("title").asText();
      if (!ids.add(panel.path("id").asInt())) {
        problems.add(title + ": duplicate id");
      }
      JsonNode grid = panel.path("gridPos");
      if (grid.path("x").asInt() + grid.path("w").asInt() > 24) {
        problems.add(title + ": wider than the 24 grid columns");
      }
      if (!DATASOURCE.equals(panel.path("datasource").path("uid").asText())) {
        problems.add(title + ": panel data source is not " + DATASOURCE);
      }
      if (panel.path("targets").isEmpty()) {
        problems.add(title + ": no query");
      }
      for (JsonNode target : panel.path("targets")) {
        if (!DATASOURCE.equals(target.path("datasource").path("uid").asText())) {
          problems.add(title + ": query data source is not " + DATASOURCE);
        }
        String expr = target.path("expr").asText();
        // Every metric selected, not just the first, carries the node filter.
        int metrics = DashboardQueries.metricNames(expr).size();
        int filters = expr.split("instance=~\"\\$instance\"", -1).length - 1;
        if (filters < Math.max(1, metrics)) {
          problems.add(title + ": a selector without the instance filter: " + expr);
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void should_take_metric_and_label_names_from_promql_when_a_query_is_parsed() {
    assertThat(
            DashboardQueries.metricNames(
                "histogram_quantile(0.99, sum by (le, op)"
                    + " (rate(fieldline_store_write_latency_seconds_bucket{instance=~\"$instance\","
                    + " op!=\"x{y}\"}[$__rate_interval])))"))
        .containsExactly("fieldline_store_write_latency_seconds_bucket");
    assertThat(
            DashboardQueries.metricNames(
                "sum(rate(a_total{instance=~\"$instance\"}[5m])) + sum(rate(b_total[1m])) > 0"
                    + " and on (instance) c_gauge offset 5m"))
        .containsExactly("a_total", "b_total", "c_gauge");
    assertThat(DashboardQueries.metricNames("rate(x[1m]) * 1e3")).containsExactly("x");
    assertThat(
            DashboardQueries.labelNames(
                new Query(
                    "t",
                    "sum by (reason) (rate(m_total{area=\"heap\", instance=~\"$instance\"}[1m]))",
                    "{{instance}} {{ cause }}")))
        .containsExactly("area", "cause", "instance", "reason");
  }

  @Test
  void should_name_what_is_missing_when_queries_use_names_a_scrape_lacks() {
    Map<String, Set<String>> samples =
        DashboardQueries.samples(
            String.join(
                "\n",
                "# HELP fieldline_mqtt_rejected_total Bad inputs by reason",
                "# TYPE fieldline_mqtt_rejected_total counter",
                "fieldline_mqtt_rejected_total{reason=\"payload\"} 1.0",
                "fieldline_mqtt_ack_latency_seconds_bucket{le=\"0.001\"} 3",
                "fieldline_mqtt_connections 2.0",
                ""));
    assertThat(samples)
        .containsOnlyKeys(
            "fieldline_mqtt_rejected_total",
            "fieldline_mqtt_ack_latency_seconds_bucket",
            "fieldline_mqtt_connections");

    List<Query> fine =
        List.of(
            new Query("ok", "sum by (reason) (rate(fieldline_mqtt_rejected_total[1m]))", ""),
            new Query("ok", "fieldline_mqtt_connections{instance=~\"$instance\"}", "{{job}}"));
    assertThat(DashboardQueries.missing(fine, samples)).isEmpty();

    List<Query> wrong =
        List.of(
            new Query("bogus", "rate(fieldline_mqtt_bogus_total[1m])", ""),
            // A histogram is stored as _bucket, _count and _sum: its family name selects nothing.
            new Query("family", "fieldline_mqtt_ack_latency_seconds", ""),
            new Query("label", "sum by (cause) (fieldline_mqtt_rejected_total)", ""),
            new Query("legend", "fieldline_mqtt_connections", "{{reason}}"),
            new Query("constant", "vector(1)", ""));
    assertThat(DashboardQueries.missing(wrong, samples))
        .containsExactly(
            "bogus: metric fieldline_mqtt_bogus_total is not exposed by /metrics",
            "family: metric fieldline_mqtt_ack_latency_seconds is not exposed by /metrics",
            "label: labels [cause] are on none of [fieldline_mqtt_rejected_total] in /metrics",
            "legend: labels [reason] are on none of [fieldline_mqtt_connections] in /metrics",
            "constant selects no metric: vector(1)");
  }

  @Test
  void should_scrape_every_fieldline_node_on_8080_when_prometheus_runs_beside_a_stack() {
    assertThat(scrapeTargets("prometheus/prometheus.yml"))
        .containsExactlyInAnyOrderElementsOf(fieldlineTargets("docker-compose.yml"))
        .containsExactly("fieldline:8080");
    assertThat(scrapeTargets("prometheus/prometheus-cluster.yml"))
        .containsExactlyInAnyOrderElementsOf(fieldlineTargets("docker-compose.cluster.yml"))
        .hasSize(3);
  }

  @Test
  void should_provision_the_prometheus_datasource_and_the_dashboard_when_grafana_starts() {
    Map<String, Object> datasources = yaml("grafana/provisioning/datasources/prometheus.yml");
    assertThat(datasources.get("apiVersion")).isEqualTo(1);
    List<Map<String, Object>> list = list(datasources.get("datasources"));
    assertThat(list).hasSize(1);
    assertThat(list.get(0))
        .containsEntry("type", "prometheus")
        .containsEntry("url", "http://prometheus:9090")
        .containsEntry("isDefault", true);

    Map<String, Object> dashboards = yaml("grafana/provisioning/dashboards/fieldline.yml");
    assertThat(dashboards.get("apiVersion")).isEqualTo(1);
    List<Map<String, Object>> providers = list(dashboards.get("providers"));
    assertThat(providers).hasSize(1);
    assertThat(providers.get(0)).containsEntry("type", "file");
    assertThat(map(providers.get(0).get("options")))
        .containsEntry("path", "/var/lib/grafana/dashboards");
  }

  /** Every target of every static_config of the Prometheus file, checked to be /metrics, http. */
  private static List<String> scrapeTargets(String file) {
    Map<String, Object> config = yaml(file);
    List<String> targets = new ArrayList<>();
    for (Map<String, Object> job : list(config.get("scrape_configs"))) {
      assertThat(job).as(file).containsEntry("metrics_path", "/metrics");
      assertThat(job.getOrDefault("scheme", "http")).as(file).isEqualTo("http");
      for (Map<String, Object> statics : list(job.get("static_configs"))) {
        for (Object target : (List<?>) statics.get("targets")) {
          targets.add((String) target);
        }
      }
    }
    return targets;
  }

  /** host:8080 of every service of the compose file that runs the Fieldline image. */
  private static Set<String> fieldlineTargets(String composeFile) {
    Set<String> targets = new TreeSet<>();
    map(yaml(composeFile).get("services"))
        .forEach(
            (name, service) -> {
              if (FIELDLINE_IMAGE.equals(map(service).get("image"))) {
                targets.add(name + ":8080");
              }
            });
    assertThat(targets).as(composeFile).isNotEmpty();
    return targets;
  }

  private static Map<String, Object> yaml(String file) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    try {
      return new Yaml(new SafeConstructor(options)).load(Files.readString(DOCKER.resolve(file)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Object value) {
    return (List<Map<String, Object>>) value;
  }
}
