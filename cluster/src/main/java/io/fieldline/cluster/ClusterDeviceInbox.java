package io.fieldline.cluster;

import io.fieldline.cluster.ClusterMetrics.FailureReason;
import io.fieldline.cluster.forward.Forwarder;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.port.DeviceInbox;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The {@link DeviceInbox} of a cluster node: a message goes to its device's owner as the ring in
 * force names it — this node's local gateway when it is the owner, else the owner over gRPC. The
 * stage completes with the owner's verdict; an owner that dies, a broken stream or a missed
 * deadline give {@code Rejected(UNAVAILABLE)}, so the transport sends no PUBACK and the device
 * retransmits (to whichever node then owns it).
 *
 * <p>With no ring (no member registered, or this node alone and not claiming) every message is
 * rejected as {@code UNAVAILABLE}. Thread-safe; {@link #submit} never blocks.
 */
public final class ClusterDeviceInbox implements DeviceInbox {

  private final String selfId;
  private final Supplier<ClusterView> view;
  private final DeviceInbox local;
  private final Forwarder forwarder;
  private final ClusterMetrics metrics;

  ClusterDeviceInbox(
      String selfId,
      Supplier<ClusterView> view,
      DeviceInbox local,
      Forwarder forwarder,
      ClusterMetrics metrics) {
    this.selfId = selfId;
    this.view = view;
    this.local = local;
    this.forwarder = forwarder;
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<Ack> submit(DeviceMessage message) {
    ClusterView current = view.get();
    String owner = current.ring().ownerOf(message.deviceId());
    if (owner == null) {
      metrics.forwardRefused(FailureReason.NO_OWNER);
      return CompletableFuture.completedFuture(
          Ack.rejected(
              Ack.Reason.UNAVAILABLE,
              "no cluster member owns device " + message.deviceId() + " (empty ring)"));
    }
    if (owner.equals(selfId)) {
      return local.submit(message);
    }
    if (message.size() == 0) {
      return CompletableFuture.completedFuture(Ack.stored()); // nothing to store: no round trip
    }
    Member member = current.members().get(owner);
    if (member == null) {
      metrics.forwardRefused(FailureReason.NO_OWNER);
      return CompletableFuture.completedFuture(
          Ack.rejected(
              Ack.Reason.UNAVAILABLE,
              "owner " + owner + " of device " + message.deviceId() + " has no known address"));
    }
    return forwarder.forward(member, message);
  }

  /** The node that owns {@code device} in the ring in force, if any. */
  public Optional<String> ownerOf(DeviceId device) {
    return Optional.ofNullable(view.get().ring().ownerOf(device));
  }

  /**
   * Stops forwarding and returns a stage that completes when every forwarded message has its answer
   * or hit its deadline (the local gateway drains on its own).
   */
  public CompletionStage<Void> shutdown() {
    return forwarder.shutdown();
  }
}
