package io.fieldline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PromQL queries of a Grafana dashboard (docker/grafana/fieldline-dashboard.json), the metric
 * and label names each one uses, and a check of those names against a Prometheus text scrape.
 *
 * <p>A query's metric names are what is left of it once strings, label matchers, range selectors,
 * grouping clauses, Grafana variables, numbers, keywords and function names are taken out: every
 * remaining identifier must be the name of a sample in the scrape, exactly as Prometheus stores it
 * ({@code _bucket}, {@code _count}, {@code _sum}, {@code _total} included), whatever its prefix.
 * Its label names are those of its matchers, of its {@code by}/{@code without}/{@code on}/{@code
 * ignoring} clauses and of its legend's {@code {{label}}}: each must be on a sample of one of the
 * query's metrics, or be a label Prometheus adds to every target.
 */
final class DashboardQueries {

  /** Labels Prometheus attaches to every scraped series (not in the scrape itself). */
  static final Set<String> TARGET_LABELS = Set.of("instance", "job");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> KEYWORDS =
      Set.of(
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "and",
          "or",
          "unless",
          "bool",
          "offset",
          "inf",
          "nan");
  private static final Pattern STRING = Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|'[^']*'");
  private static final Pattern MATCHERS = Pattern.compile("\\{([^}]*)}");
  private static final Pattern MATCHER_LABEL = Pattern.compile("([A-Za-z_]\\w*)\\s*(?:=~|!~|!=|=)");
  private static final Pattern GROUPING =
      Pattern.compile(
          "\\b(?:by|without|on|ignoring|group_left|group_right)\\s*\\(([^)]*)\\)",
          Pattern.CASE_INSENSITIVE);
  private static final Pattern RANGE = Pattern.compile("\\[[^]]*]");
  private static final Pattern VARIABLE = Pattern.compile("\\$\\{?\\w+}?");
  // Possessive, so that "rate(" is a function and never the metric "rat" followed by "e(".
  private static final Pattern IDENTIFIER =
      Pattern.compile("(?<![\\w.:])([A-Za-z_:][\\w:]*+)(?!\\s*\\()");
  private static final Pattern LEGEND_LABEL = Pattern.compile("\\{\\{\\s*(\\w+)\\s*}}");
  private static final Pattern LABEL_VALUES =
      Pattern.compile("^\\s*label_values\\((.*),\\s*(\\w+)\\s*\\)\\s*$");
  private static final Pattern SAMPLE_LABEL = Pattern.compile("(\\w+)=\"(?:[^\"\\\\]|\\\\.)*\"");

  /** One query: where it is (panel title, or variable name), its PromQL and its legend. */
  record Query(String where, String expr, String legend) {}

  private DashboardQueries() {}

  static JsonNode read(Path dashboard) {
    try {
      return JSON.readTree(Files.readString(dashboard));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every panel of the dashboard, those inside collapsed rows included (rows excluded). */
  static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> panels = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      if ("row".equals(panel.path("type").asText())) {
        panel.path("panels").forEach(panels::add);
      } else {
        panels.add(panel);
      }
    }
    return panels;
  }

  /** The queries of every panel target and of every query variable. */
  static List<Query> queries(JsonNode dashboard) {
    List<Query> queries = new ArrayList<>();
    for (JsonNode panel : panels(dashboard)) {
      for (JsonNode target : panel.path("targets")) {
        queries.add(
            new Query(
                "panel '" + panel.path("title").asText() + "'",
                target.path("expr").asText(),
                target.path("legendFormat").asText("")));
      }
    }
    for (JsonNode variable : dashboard.path("templating").path("list")) {
      if (!"query".equals(variable.path("type").asText())) {
        continue;
      }
      JsonNode query = variable.path("query");
      String text = query.isObject() ? query.path("query").asText() : query.asText();
      String where = "variable '" + variable.path("name").asText() + "'";
      Matcher values = LABEL_VALUES.matcher(text);
      if (values.matches()) {
        // label_values(selector, label): the selector is a query, the label one of its labels.
        queries.add(new Query(where, values.group(1), "{{" + values.group(2) + "}}"));
      } else {
        queries.add(new Query(where, text, ""));
      }
    }
    return queries;
  }

  /** The metric names {@code expr} selects. */
  static Set<String> metricNames(String expr) {
    String rest = STRING.matcher(expr).replaceAll("\"\"");
    rest = MATCHERS.matcher(rest).replaceAll(" ");
    rest = GROUPING.matcher(rest).replaceAll(" ");
    rest = RANGE.matcher(rest).replaceAll(" ");
    rest = VARIABLE.matcher(rest).replaceAll(" ");
    Set<String> names = new TreeSet<>();
    Matcher identifier = IDENTIFIER.matcher(rest);
    while (identifier.find()) {
      String name = identifier.group(1);
      if (!KEYWORDS.contains(name.toLowerCase(Locale.ROOT))) {
        names.add(name);
      }
    }
    return names;
  }

  /** The label names a query matches on, groups by, or shows in its legend. */
  static Set<String> labelNames(Query query) {
    String expr = STRING.matcher(query.expr()).replaceAll("\"\"");
    Set<String> labels = new TreeSet<>();
    Matcher matchers = MATCHERS.matcher(expr);
    while (matchers.find()) {
      Matcher label = MATCHER_LABEL.matcher(matchers.group(1));
      while (label.find()) {
        labels.add(label.group(1));
      }
    }
    Matcher grouping = GROUPING.matcher(expr);
    while (grouping.find()) {
      for (String label : grouping.group(1).split(",")) {
        if (!label.isBlank()) {
          labels.add(label.trim());
        }
      }
    }
    Matcher legend = LEGEND_LABEL.matcher(query.legend());
    while (legend.find()) {
      labels.add(legend.group(1));
    }
    return labels;
  }

  /** Sample name to the label names seen on its samples, from a Prometheus text scrape. */
  static Map<String, Set<String>> samples(String scrape) {
    Map<String, Set<String>> samples = new TreeMap<>();
    for (String line : scrape.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      int brace = line.indexOf('{');
      int space = line.indexOf(' ');
      boolean labelled = brace >= 0 && (space < 0 || brace < space);
      String name = line.substring(0, labelled ? brace : space);
      Set<String> labels = samples.computeIfAbsent(name, n -> new TreeSet<>());
      if (labelled) {
        Matcher label = SAMPLE_LABEL.matcher(line.substring(brace + 1, line.lastIndexOf('}')));
        while (label.find()) {
          labels.add(label.group(1));
        }
      }
    }
    return samples;
  }

  /**
   * What the queries use that the scrape lacks, one line per problem naming the query's place; an
   * empty list when every metric and label is there.
   */
  static List<String> missing(List<Query> queries, Map<String, Set<String>> samples) {
    List<String> problems = new ArrayList<>();
    for (Query query : queries) {
      Set<String> metrics = metricNames(query.expr());
      if (metrics.isEmpty()) {
        problems.add(query.where() + " selects no metric: " + query.expr());
      }
      Set<String> available = new TreeSet<>(TARGET_LABELS);
      for (String metric : metrics) {
        Set<String> labels = samples.get(metric);
        if (labels == null) {
          problems.add(query.where() + ": metric " + metric + " is not exposed by /metrics");
        } else {
          available.addAll(labels);
        }
      }
      Set<String> unknown = new TreeSet<>(labelNames(query));
      unknown.removeAll(available);
      if (!unknown.isEmpty()) {
        problems.add(
            query.where() + ": labels " + unknown + " are on none of " + metrics + " in /metrics");
      }
    }
    return problems;
  }
}
