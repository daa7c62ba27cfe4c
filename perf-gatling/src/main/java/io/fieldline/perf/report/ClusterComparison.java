package io.fieldline.perf.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The single node next to the local cluster of the same run (bench/run.sh phases {@code fieldline}
 * and {@code cluster}), and what forwarding costs: the cluster's extra CPU per persisted message
 * divided by the share of messages that were forwarded, and the PUBACK percentile deltas.
 *
 * <p>The node metrics are the cluster's {@code /metrics} after the phase minus before it, summed
 * over the nodes; the single node's are its scrape after the phase (no forwarding, and devices are
 * provisioned through REST, which writes no telemetry).
 *
 * @param single the single-node phase, if it ran
 * @param singleCheck its stored-row check
 * @param singleMetrics its {@code /metrics} after the phase
 * @param cluster the cluster phase
 * @param clusterCheck its stored-row check
 * @param clusterMetrics what the cluster's meters gained during the phase, all nodes
 * @param steadyMetrics what they gained over the steady window (periodic scrapes around it)
 * @param nodes cluster nodes; their CPU samples are labelled {@code node-1} … {@code node-N}
 */
record ClusterComparison(
    @Nullable PhaseResult single,
    @Nullable JsonNode singleCheck,
    PrometheusText singleMetrics,
    PhaseResult cluster,
    @Nullable JsonNode clusterCheck,
    PrometheusText clusterMetrics,
    PrometheusText steadyMetrics,
    int nodes) {

  static final String FORWARDED = "fieldline_cluster_forwarded_total";
  static final String RECEIVED = "fieldline_cluster_received_total";
  static final String FORWARD_FAILURES = "fieldline_cluster_forward_failures_total";
  static final String FORWARD_LATENCY = "fieldline_cluster_forward_latency_seconds";
  static final String WRITES_PER_REQUEST = "fieldline_store_request_writes";

  String[] nodeLabels() {
    String[] labels = new String[nodes];
    for (int i = 0; i < nodes; i++) {
      labels[i] = "node-" + (i + 1);
    }
    return labels;
  }

  /** Acknowledged messages of the whole cluster phase (ramp and warm-up included). */
  double clusterAcked() {
    return cluster.json().path("acked").asDouble();
  }

  /** Messages the nodes forwarded to another node, whole phase. */
  double forwarded() {
    return clusterMetrics.sum(FORWARDED);
  }

  /** Forwarded messages ÷ acknowledged messages, whole phase. */
  double forwardedShareWholePhase() {
    return clusterAcked() > 0 ? forwarded() / clusterAcked() : Double.NaN;
  }

  /**
   * Forwarded messages ÷ device messages the nodes wrote, over the steady window (both from the
   * nodes' meters); the whole phase's share when there were no scrapes around the window.
   */
  double forwardedShare() {
    double written = steadyMetrics.sum(WRITES_PER_REQUEST + "_sum");
    return written > 0 ? steadyMetrics.sum(FORWARDED) / written : forwardedShareWholePhase();
  }

  /** CPU µs of the single server and Cassandra per message acknowledged in its steady window. */
  double singleMicrosPerMessage() {
    return single == null ? Double.NaN : single.cpuMicrosPerUnit("server", "cassandra");
  }

  /** CPU µs of all nodes and Cassandra per message acknowledged in the cluster's steady window. */
  double clusterMicrosPerMessage() {
    String[] labels = nodeLabels();
    String[] withCassandra = Arrays.copyOf(labels, labels.length + 1);
    withCassandra[labels.length] = "cassandra";
    return cluster.cpuMicrosPerUnit(withCassandra);
  }

  /**
   * Extra CPU µs per forwarded message: (cluster µs per message − single node µs per message) ÷
   * forwarded share. Everything the cluster costs more is charged to forwarding, including a second
   * JVM's fixed costs and the smaller write batches of two stores sharing the load.
   */
  double extraMicrosPerForwarded() {
    return (clusterMicrosPerMessage() - singleMicrosPerMessage()) / forwardedShare();
  }

  /** The same, for the Fieldline processes only (nodes against the single server). */
  double extraNodeMicrosPerForwarded() {
    double singleServer = single == null ? Double.NaN : single.cpuMicrosPerUnit("server");
    return (cluster.cpuMicrosPerUnit(nodeLabels()) - singleServer) / forwardedShare();
  }

  /** The same, for Cassandra only. */
  double extraCassandraMicrosPerForwarded() {
    double singleCassandra = single == null ? Double.NaN : single.cpuMicrosPerUnit("cassandra");
    return (cluster.cpuMicrosPerUnit("cassandra") - singleCassandra) / forwardedShare();
  }

  /** Cluster minus single node, steady-window PUBACK percentile {@code p} ("p50", "p99"), ms. */
  double steadyDelta(String percentile) {
    if (single == null) {
      return Double.NaN;
    }
    return steady(cluster, percentile) - steady(single, percentile);
  }

  private static double steady(PhaseResult phase, String percentile) {
    JsonNode millis = phase.json().path("steadyAckLatencyMillis");
    return millis.path("count").asLong() > 0 ? millis.path(percentile).asDouble() : Double.NaN;
  }

  void render(StringBuilder md) {
    String clusterName = nodes + "-node cluster";
    md.append("#### Single node and ").append(clusterName).append(": the cost of forwarding\n\n");
    md.append("The cluster: scripts/local-cluster.sh (one ZooKeeper, one Cassandra, ")
        .append(nodes)
        .append(" nodes with the single node's JVM options); Gatling user *i* connects to node")
        .append(" (*i* mod ")
        .append(nodes)
        .append(") + 1 and the ring picks the owner, so about ")
        .append(nodes - 1)
        .append('/')
        .append(nodes)
        .append(
            " of the messages are forwarded over gRPC before they are stored. Steady windows:"
                + " single node ")
        .append(single == null ? "-" : fmt(single.windowSeconds(), 0) + " s")
        .append(", cluster ")
        .append(fmt(cluster.windowSeconds(), 0))
        .append(" s.\n\n");
    md.append("| | single node | ").append(clusterName).append(" | cluster − single |\n");
    md.append("| --- | ---: | ---: | ---: |\n");
    row(md, "msgs/s offered", BenchReport.offered(single), BenchReport.offered(cluster), "");
    row(
        md,
        "msgs/s achieved (steady window)",
        BenchReport.rate(single),
        BenchReport.rate(cluster),
        "");
    row(
        md,
        "requests sent / acked / KO",
        BenchReport.counts(single),
        BenchReport.counts(cluster),
        "");
    row(md, "acked / stored / missing (partial)", stored(singleCheck), stored(clusterCheck), "");
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms, steady window",
        BenchReport.latency(single, "steadyAckLatencyMillis"),
        BenchReport.latency(cluster, "steadyAckLatencyMillis"),
        "p50 " + signed(steadyDelta("p50"), 1) + ", p99 " + signed(steadyDelta("p99"), 1));
    row(
        md,
        "PUBACK p50 / p95 / p99 / p99.9 / max ms, whole run",
        BenchReport.latency(single, "ackLatencyMillis"),
        BenchReport.latency(cluster, "ackLatencyMillis"),
        "");
    row(
        md,
        "connects OK; TCP connect → CONNACK p50 / p95 / p99 / p99.9 / max ms",
        BenchReport.connects(single),
        BenchReport.connects(cluster),
        "");
    double singleServerCores = single == null ? Double.NaN : single.cores("server");
    double nodeCores = 0;
    List<String> perNode = new ArrayList<>();
    for (String label : nodeLabels()) {
      nodeCores += cluster.cores(label);
      perNode.add(fmt(cluster.cores(label), 2));
    }
    row(
        md,
        "CPU cores: Fieldline (server; sum of the nodes)",
        fmt(singleServerCores, 2),
        fmt(nodeCores, 2) + " (" + String.join(" + ", perNode) + ")",
        signed(nodeCores - singleServerCores, 2));
    double singleCassandra = single == null ? Double.NaN : single.cores("cassandra");
    row(
        md,
        "CPU cores: Cassandra",
        fmt(singleCassandra, 2),
        fmt(cluster.cores("cassandra"), 2),
        signed(cluster.cores("cassandra") - singleCassandra, 2));
    row(md, "CPU cores: ZooKeeper", "-", fmt(cluster.cores("zookeeper"), 2), "");
    row(
        md,
        "CPU cores: load generator",
        single == null ? "-" : fmt(single.cores("generator"), 2),
        fmt(cluster.cores("generator"), 2),
        "");
    row(md, "CPU cores: other processes on the machine", others(single), others(cluster), "");
    double singlePerMessage = singleMicrosPerMessage();
    double clusterPerMessage = clusterMicrosPerMessage();
    row(
        md,
        "CPU µs per persisted message: Fieldline + Cassandra",
        fmt(singlePerMessage, 0),
        fmt(clusterPerMessage, 0),
        signed(clusterPerMessage - singlePerMessage, 0));
    double singleServerPerMessage = single == null ? Double.NaN : single.cpuMicrosPerUnit("server");
    double singleCassandraPerMessage =
        single == null ? Double.NaN : single.cpuMicrosPerUnit("cassandra");
    double nodesPerMessage = cluster.cpuMicrosPerUnit(nodeLabels());
    double cassandraPerMessage = cluster.cpuMicrosPerUnit("cassandra");
    row(
        md,
        "… of which Fieldline / Cassandra",
        fmt(singleServerPerMessage, 0) + " / " + fmt(singleCassandraPerMessage, 0),
        fmt(nodesPerMessage, 0) + " / " + fmt(cassandraPerMessage, 0),
        signed(nodesPerMessage - singleServerPerMessage, 0)
            + " / "
            + signed(cassandraPerMessage - singleCassandraPerMessage, 0));
    row(
        md,
        "messages per Cassandra write request (whole phase)",
        writesPerRequest(singleMetrics),
        writesPerRequest(clusterMetrics),
        "");
    row(
        md,
        "messages forwarded to their owner over gRPC, whole phase (share of acked)",
        "-",
        fmt(forwarded(), 0) + " (" + fmt(100 * forwardedShareWholePhase(), 1) + " %)",
        "");
    row(
        md,
        "… steady window (share of the messages the nodes wrote)",
        "-",
        fmt(steadyMetrics.sum(FORWARDED), 0) + " (" + fmt(100 * forwardedShare(), 1) + " %)",
        "");
    row(
        md,
        "forward latency, sent → owner's \"stored\" (owner's write included), steady window:"
            + " mean / p50 ≤ / p99 ≤ / p99.9 ≤ ms",
        "-",
        forwardLatency(steadyMetrics),
        "");
    row(md, "… whole phase", "-", forwardLatency(clusterMetrics), "");
    row(
        md,
        "forwarded messages not stored (timeout, broken stream, overloaded, rejected)",
        "-",
        fmt(clusterMetrics.sum(FORWARD_FAILURES), 0),
        "");
    md.append("\n");
    md.append(
        "Forwarding cost (everything the cluster costs more than the single node, charged to"
            + " the forwarded messages):\n\n");
    md.append("- CPU per forwarded message: ")
        .append(signed(extraMicrosPerForwarded(), 0))
        .append(" µs (Fieldline nodes ")
        .append(signed(extraNodeMicrosPerForwarded(), 0))
        .append(" µs, Cassandra ")
        .append(signed(extraCassandraMicrosPerForwarded(), 0))
        .append(" µs) = (")
        .append(fmt(clusterPerMessage, 0))
        .append(" − ")
        .append(fmt(singlePerMessage, 0))
        .append(" µs per message) ÷ ")
        .append(fmt(forwardedShare(), 3))
        .append(" forwarded share (steady window)\n");
    md.append("- PUBACK, steady window: p50 ")
        .append(signed(steadyDelta("p50"), 1))
        .append(" ms, p99 ")
        .append(signed(steadyDelta("p99"), 1))
        .append(" ms, p99.9 ")
        .append(signed(steadyDelta("p999"), 1))
        .append(" ms\n");
  }

  private static String forwardLatency(PrometheusText metrics) {
    double count = metrics.sum(FORWARD_LATENCY + "_count");
    if (count <= 0) {
      return "-";
    }
    double meanMillis = 1000 * metrics.sum(FORWARD_LATENCY + "_sum") / count;
    return fmt(meanMillis, 1)
        + " / "
        + fmt(1000 * metrics.quantileUpperBound(FORWARD_LATENCY, 0.50), 1)
        + " / "
        + fmt(1000 * metrics.quantileUpperBound(FORWARD_LATENCY, 0.99), 1)
        + " / "
        + fmt(1000 * metrics.quantileUpperBound(FORWARD_LATENCY, 0.999), 1)
        + " ("
        + fmt(count, 0)
        + " messages)";
  }

  private static String writesPerRequest(PrometheusText metrics) {
    double requests = metrics.sum(WRITES_PER_REQUEST + "_count");
    return requests > 0 ? fmt(metrics.sum(WRITES_PER_REQUEST + "_sum") / requests, 2) : "-";
  }

  private static String stored(@Nullable JsonNode check) {
    if (check == null) {
      return "not checked";
    }
    return check.path("acked").asLong()
        + " / "
        + check.path("storedAcked").asLong()
        + " / "
        + check.path("missing").asLong()
        + " ("
        + check.path("partial").asLong()
        + ")";
  }

  /** Busy cores of the whole machine minus the phase's own processes. */
  private static String others(@Nullable PhaseResult phase) {
    if (phase == null || !phase.cpu().has("machine")) {
      return "-";
    }
    double own = 0;
    for (String label : phase.cpu().labels()) {
      if (!label.equals("machine") && phase.cpu().has(label)) {
        own += phase.cores(label);
      }
    }
    return fmt(Math.max(0, phase.cores("machine") - own), 2);
  }

  private static String fmt(double value, int decimals) {
    return BenchReport.fmt(value, decimals);
  }

  private static String signed(double value, int decimals) {
    if (Double.isNaN(value) || Double.isInfinite(value)) {
      return "-";
    }
    return (value >= 0 ? "+" : "") + fmt(value, decimals);
  }

  private static void row(StringBuilder md, String name, String a, String b, String delta) {
    md.append("| ")
        .append(name)
        .append(" | ")
        .append(a)
        .append(" | ")
        .append(b)
        .append(" | ")
        .append(delta)
        .append(" |\n");
  }
}
