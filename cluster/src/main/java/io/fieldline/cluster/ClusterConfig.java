package io.fieldline.cluster;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

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
 * @param takeoverTimeout deadline of one takeover notice, and of one credentials revocation notice
 * @param maxPendingTakeovers takeover notices in flight, all peers together (and, separately,
 *     revocation notices)
 * @param eventTimeout deadline of one device event, or RPC progress report, sent to a peer
 * @param maxInflightEventsPerPeer device events in flight to one peer, and separately RPC progress
 *     reports
 * @param maxPendingRpcCalls RPC callers on this node that other nodes may report progress to
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
    Duration eventTimeout,
    int maxInflightEventsPerPeer,
    int maxPendingRpcCalls,
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
    ConfigReader r = ConfigReader.of(root, "fieldline.cluster");
    String zookeeper = r.string("zookeeper").trim();
    String znodeRoot = r.string("root");
    r.check(
        znodeRoot.startsWith("/") && znodeRoot.length() >= 2 && !znodeRoot.endsWith("/"),
        "root",
        "must be an absolute ZooKeeper path without a trailing /, got '" + znodeRoot + "'");
    String configuredId = r.string("node-id").trim();
    String nodeId = configuredId.isEmpty() ? defaultNodeId() : configuredId;
    // It names a znode and appears in log prefixes: keep it to a safe alphabet.
    r.check(
        nodeId.matches("[A-Za-z0-9._-]{1,128}"),
        "node-id",
        "must be 1..128 characters of [A-Za-z0-9._-], got '" + nodeId + "'");
    String grpcHost = r.string("grpc-host");
    int grpcPort = r.integer("grpc-port", 0, 65535);
    String advertisedHost = r.nonBlankString("advertised-host");
    int virtualNodes = r.integer("virtual-nodes", 1, 4096);
    Duration rebalanceDelay = r.nonNegativeDuration("rebalance-delay");
    Duration forwardTimeout = r.positiveDuration("forward-timeout");
    int maxInflightPerPeer = r.integer("max-inflight-per-peer", 4);
    Duration takeoverTimeout = r.positiveDuration("takeover-timeout");
    int maxPendingTakeovers = r.integer("max-pending-takeovers", 1);
    Duration eventTimeout = r.positiveDuration("event-timeout");
    int maxInflightEventsPerPeer = r.integer("max-inflight-events-per-peer", 1);
    int maxPendingRpcCalls = r.integer("max-pending-rpc-calls", 1);
    Duration sessionTimeout = r.positiveDuration("zookeeper-session-timeout");
    Duration connectionTimeout = r.positiveDuration("zookeeper-connection-timeout");
    return r.validated(
        new ClusterConfig(
            zookeeper,
            znodeRoot,
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
            eventTimeout,
            maxInflightEventsPerPeer,
            maxPendingRpcCalls,
            sessionTimeout,
            connectionTimeout));
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
}
