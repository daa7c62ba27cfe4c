package io.fieldline.cluster.membership;

import io.fieldline.cluster.Member;
import java.util.Map;

/**
 * What ZooKeeper says at one moment, as this node sees it.
 *
 * @param members the registered members by node id, this node included once registered
 * @param connected whether the ZooKeeper connection is up (not suspended, lost or read-only)
 * @param registered whether this node's znode exists and belongs to the current ZooKeeper session
 *     (a znode left by an earlier session does not count)
 */
public record MembershipSnapshot(
    Map<String, Member> members, boolean connected, boolean registered) {

  public MembershipSnapshot {
    members = Map.copyOf(members);
  }

  /** Connected and registered: this node may claim the devices the ring gives it. */
  public boolean claiming() {
    return connected && registered;
  }
}
