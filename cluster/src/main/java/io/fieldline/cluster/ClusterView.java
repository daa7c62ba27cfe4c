package io.fieldline.cluster;

import io.fieldline.common.DeviceId;
import java.util.Map;
import java.util.Optional;

/**
 * One consistent picture of the cluster, as this node uses it to route messages: the ring, the
 * address of every node on it, and whether this node currently claims its own devices.
 *
 * @param ring the ring in force (rebuilt after the rebalance delay)
 * @param members addresses of every node on the ring, plus members not (yet) on it
 * @param claiming whether this node is on its own ring: connected to ZooKeeper and registered in
 *     the current session
 */
public record ClusterView(HashRing ring, Map<String, Member> members, boolean claiming) {

  /** Before the first membership snapshot: no ring, nothing owned. */
  public static final ClusterView EMPTY = new ClusterView(HashRing.empty(), Map.of(), false);

  public ClusterView {
    members = Map.copyOf(members);
  }

  /** The owner of {@code device} with its addresses, if the ring names one. */
  public Optional<Member> ownerOf(DeviceId device) {
    String owner = ring.ownerOf(device);
    return owner == null ? Optional.empty() : Optional.ofNullable(members.get(owner));
  }
}
