package io.fieldline.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The cluster's settings, read once from {@code fieldline.cluster} (see this module's {@code
 * reference.conf} for each key's meaning and environment variable).
 *
 * @param zookeeper ZooKeeper connect string; empty = single node
 * @param root ZooKeeper path of the members' ephemeral znodes
 * @param nodeId this node's unique, stable identity in the ring
 * @param grpcHost address the gRPC listener binds to
 * @param grpcPort port of the gRPC listener; 0 picks a free one
 * @param advertisedHost host other nodes and clients use to reach this node
 * @param virtualNodes ring points per node
 * @param rebalanceDelay how long membership changes wait before the ring is rebuilt
 * @param forwardTimeout deadline of one forwarded message
 * @param maxInflightPerPeer forwarded messages in flight to one peer; also its stream's window
 * @param takeoverTimeout deadline of one takeover notice
 * @param maxPendingTakeovers takeover notices in flight, all peers together
 * @param sessionTimeout ZooKeeper session timeout
 * @param connectionTimeout ZooKeeper connection timeout and start-up wait
 */
public record ClusterConfig(
    String zookeeper,
    String root,
    String nodeId,
    String grpcHost,
    int grpcPort,
    String advertisedHost,
    int virtualNodes,
    Duration rebalanceDelay,
    Duration forwardTimeout,
    int maxInflightPerPeer,
    Duration takeoverTimeout,
    int maxPendingTakeovers,
    Duration sessionTimeout,
    Duration connectionTimeout) {

  /** Whether a ZooKeeper connect string is configured: without one the server is a single node. */
  public boolean enabled() {
    return !zookeeper.isBlank();
  }

  /**
   * Reads and validates {@code fieldline.cluster}; reports every invalid key at once. An empty
   * {@code node-id} becomes {@code <hostname>-<pid>}.
   *
   * @throws IllegalArgumentException listing every invalid key
   */
  public static ClusterConfig from(Config root) {
    Config c = root.getConfig("fieldline.cluster");
    List<String> errors = new ArrayList<>();
    String nodeId = read(errors, "node-id", c::getString, "").trim();
    ClusterConfig config =
        new ClusterConfig(
            read(errors, "zookeeper", c::getString, "").trim(),
            read(errors, "root", c::getString, "/fieldline/nodes"),
            nodeId.isEmpty() ? defaultNodeId() : nodeId,
            read(errors, "grpc-host", c::getString, ""),
            read(errors, "grpc-port", c::getInt, 0),
            read(errors, "advertised-host", c::getString, "127.0.0.1"),
            read(errors, "virtual-nodes", c::getInt, 64),
            read(errors, "rebalance-delay", c::getDuration, Duration.ZERO),
            read(errors, "forward-timeout", c::getDuration, Duration.ofSeconds(1)),
            read(errors, "max-inflight-per-peer", c::getInt, 1024),
            read(errors, "takeover-timeout", c::getDuration, Duration.ofSeconds(1)),
            read(errors, "max-pending-takeovers", c::getInt, 1),
            read(errors, "zookeeper-session-timeout", c::getDuration, Duration.ofSeconds(10)),
            read(errors, "zookeeper-connection-timeout", c::getDuration, Duration.ofSeconds(10)));
    config.validate(errors);
    if (!errors.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid fieldline.cluster configuration: " + String.join("; ", errors));
    }
    return config;
  }

  private static <T> T read(
      List<String> errors, String key, Function<String, T> getter, T fallback) {
    try {
      return getter.apply(key);
    } catch (ConfigException e) {
      errors.add(e.getMessage());
      return fallback;
    }
  }

  private void validate(List<String> errors) {
    if (!root.startsWith("/") || root.length() < 2 || root.endsWith("/")) {
      errors.add(
          "root must be an absolute ZooKeeper path without a trailing /, got '" + root + "'");
    }
    if (!nodeId.matches("[A-Za-z0-9._-]{1,128}")) {
      // It names a znode and appears in log prefixes: keep it to a safe alphabet.
      errors.add("node-id must be 1..128 characters of [A-Za-z0-9._-], got '" + nodeId + "'");
    }
    if (grpcPort < 0 || grpcPort > 65535) {
      errors.add("grpc-port must be 0..65535, got " + grpcPort);
    }
    if (advertisedHost.isBlank()) {
      errors.add("advertised-host must not be empty");
    }
    if (virtualNodes < 1 || virtualNodes > 4096) {
      errors.add("virtual-nodes must be 1..4096, got " + virtualNodes);
    }
    if (rebalanceDelay.isNegative()) {
      errors.add("rebalance-delay must not be negative");
    }
    if (!positive(forwardTimeout)) {
      errors.add("forward-timeout must be positive");
    }
    if (maxInflightPerPeer < 4) {
      errors.add("max-inflight-per-peer must be >= 4, got " + maxInflightPerPeer);
    }
    if (!positive(takeoverTimeout)) {
      errors.add("takeover-timeout must be positive");
    }
    if (maxPendingTakeovers < 1) {
      errors.add("max-pending-takeovers must be >= 1");
    }
    if (!positive(sessionTimeout)) {
      errors.add("zookeeper-session-timeout must be positive");
    }
    if (!positive(connectionTimeout)) {
      errors.add("zookeeper-connection-timeout must be positive");
    }
  }

  private static boolean positive(Duration duration) {
    return !duration.isNegative() && !duration.isZero();
  }

  private static String defaultNodeId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "node";
    }
    String safe = host.replaceAll("[^A-Za-z0-9._-]", "-");
    if (safe.length() > 100) {
      safe = safe.substring(0, 100);
    }
    return safe + "-" + ProcessHandle.current().pid();
  }

  /** A copy with another node id (tests run several nodes from one configuration). */
  public ClusterConfig withNodeId(String id) {
    return new ClusterConfig(
        zookeeper,
        root,
        id,
        grpcHost,
        grpcPort,
        advertisedHost,
        virtualNodes,
        rebalanceDelay,
        forwardTimeout,
        maxInflightPerPeer,
        takeoverTimeout,
        maxPendingTakeovers,
        sessionTimeout,
        connectionTimeout);
  }

  /** A copy with another ZooKeeper connect string. */
  public ClusterConfig withZookeeper(String connectString) {
    return new ClusterConfig(
        connectString,
        root,
        nodeId,
        grpcHost,
        grpcPort,
        advertisedHost,
        virtualNodes,
        rebalanceDelay,
        forwardTimeout,
        maxInflightPerPeer,
        takeoverTimeout,
        maxPendingTakeovers,
        sessionTimeout,
        connectionTimeout);
  }
}
