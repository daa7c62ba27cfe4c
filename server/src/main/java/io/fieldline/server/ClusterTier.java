package io.fieldline.server;

import io.fieldline.cluster.ClusterConfig;
import io.fieldline.cluster.ClusterNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.feed.DeviceMoves;
import io.fieldline.common.port.DeviceInbox;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.common.port.SessionCloser;
import io.fieldline.common.port.SessionTakeover;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The cluster tier, present only with {@code fieldline.cluster.zookeeper} set: a {@link
 * ClusterNode} (gRPC listener, ZooKeeper membership) between the transport and the local device
 * actors, forwarding each message to its device's owner node. On a single node every method answers
 * with the local equivalent, so the transport tier is wired the same way in both cases.
 *
 * @param node the cluster node, or null on a single node
 * @param config the cluster's settings
 */
record ClusterTier(@Nullable ClusterNode node, ClusterConfig config) {

  /**
   * Starts the node's gRPC listener and ZooKeeper membership (it joins the ring only in {@link
   * #join}). Takeover notices from other nodes close sessions through {@code sessions}, which
   * exists before the transport does; revocation notices run {@code localRevocation}.
   */
  static ClusterTier start(
      ClusterConfig config,
      DeviceTier devices,
      SessionCloser sessions,
      CredentialsRevocation localRevocation,
      LocalDeviceEvents localEvents,
      MeterRegistry metrics,
      StopSteps stops) {
    if (!config.enabled()) {
      return new ClusterTier(null, config);
    }
    ClusterNode node =
        ClusterNode.start(
            config, devices.gateway(), sessions, localRevocation, localEvents, metrics);
    stops.add("cluster node", node::close);
    // Actors of devices the ring gives to another node stop now (their writes finish); a later
    // message starts a fresh actor on the owner, which restores its state from Cassandra.
    String self = node.nodeId();
    node.addViewListener(
        view -> devices.gateway().release(device -> !self.equals(view.ring().ownerOf(device))));
    return new ClusterTier(node, config);
  }

  /** What the transport submits to: the cluster's forwarding gateway, or the local actors. */
  DeviceInbox gateway(DeviceInbox local) {
    return node == null ? local : node.gateway();
  }

  /**
   * Runs {@code listener} with the members' node ids whenever the cluster's view changes; never on
   * a single node.
   */
  void onMembersChanged(Consumer<Collection<String>> listener) {
    if (node != null) {
      node.addViewListener(view -> listener.accept(view.members().keySet()));
    }
  }

  /** Where moved devices were written before; nothing ever moves on a single node. */
  DeviceMoves deviceMoves() {
    return node == null ? DeviceMoves.NONE : node.deviceMoves();
  }

  /** Tells the other nodes when a device connects here; nothing to tell on a single node. */
  SessionTakeover takeover() {
    return node == null ? SessionTakeover.LOCAL_ONLY : node.sessionTakeover();
  }

  /**
   * What the REST API runs once a credential changed or a device was deleted: {@code local} on a
   * single node; on a cluster, {@code local} and a notice to every other node.
   */
  CredentialsRevocation revocation(CredentialsRevocation local) {
    return node == null ? local : node.credentialsRevocation();
  }

  /**
   * Where device events go: {@code local} on a single node; in a cluster, this node's listeners and
   * every other node's.
   */
  DeviceEvents events(LocalDeviceEvents local) {
    return node == null ? local : node.deviceEvents();
  }

  /**
   * Whether this node owns a device: always on a single node; in a cluster, whether its ring says
   * so now (during a rebalance two nodes, or none, may think so for a moment).
   */
  Predicate<DeviceId> owns() {
    if (node == null) {
      return device -> true;
    }
    String self = node.nodeId();
    return device -> node.view().ownerOf(device).map(m -> self.equals(m.nodeId())).orElse(false);
  }

  /** The forwarding queue's gauge, which pauses socket reads like storage pressure does. */
  List<PressureGauge> pressure() {
    return node == null ? List.of() : List.of(node.forwardingPressure());
  }

  /** Lets forwarded messages finish (their PUBACKs go out) before the transport closes. */
  void drainForwarded() {
    if (node != null) {
      StopSteps.await(
          node.gateway().shutdown(), config.forwardTimeout().plusSeconds(1), "forwarded messages");
    }
  }

  /** Whether this node can serve: always on a single node, on its own ring in a cluster. */
  boolean ready() {
    return node == null || node.claiming();
  }

  /** Joins the ring, last: other nodes forward to this one only once it can serve them. */
  void join(int mqttPort, int httpPort, StopSteps stops) {
    if (node != null) {
      node.join(mqttPort, httpPort);
      stops.add("cluster membership", node::leave);
    }
  }
}
