package io.fieldline.cluster.events;

import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.RpcDelivered;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.fieldline.cluster.internal.proto.RpcResponded;
import io.fieldline.cluster.internal.proto.RpcSent;
import io.fieldline.cluster.internal.proto.RpcUndelivered;
import io.fieldline.cluster.internal.proto.Uuid;
import io.fieldline.common.rpc.RpcCallback;
import java.util.UUID;

/**
 * The callback a listener on this node gets for an RPC whose caller waits on another node (the
 * origin): each step becomes an {@code RpcProgress} report sent to the origin on this node's event
 * stream to it, so the reports of one RPC arrive in the order the session made them. There the
 * origin's {@link RpcCalls} passes them to the real callback.
 *
 * <p>Fire-and-forget: a report that cannot be sent, or is not answered in time, is counted and
 * logged by the sender; the caller then gets no more progress and its RPC times out. Whether the
 * call is settled is the real callback's business, so every step is sent. Thread-safe, never
 * blocks.
 */
final class RemoteRpcCallback implements RpcCallback {

  /** Sends a report to the node of the caller. */
  @FunctionalInterface
  interface ProgressSender {
    void send(String originNodeId, RpcProgress report);
  }

  private final String originNodeId;
  private final long callId;
  private final Uuid rpcId;
  private final ProgressSender sender;

  RemoteRpcCallback(String originNodeId, long callId, UUID rpcId, ProgressSender sender) {
    this.originNodeId = originNodeId;
    this.callId = callId;
    this.rpcId = MessageCodec.uuid(rpcId);
    this.sender = sender;
  }

  @Override
  public void sent() {
    report(report().setSent(RpcSent.getDefaultInstance()));
  }

  @Override
  public void delivered() {
    report(report().setDelivered(RpcDelivered.getDefaultInstance()));
  }

  @Override
  public void responded(String body) {
    report(report().setResponded(RpcResponded.newBuilder().setBody(body)));
  }

  @Override
  public void undelivered(String reason) {
    report(report().setUndelivered(RpcUndelivered.newBuilder().setReason(reason)));
  }

  private RpcProgress.Builder report() {
    return RpcProgress.newBuilder().setCallId(callId).setRpcId(rpcId);
  }

  private void report(RpcProgress.Builder report) {
    sender.send(originNodeId, report.build());
  }

  @Override
  public String toString() {
    return "RemoteRpcCallback[" + originNodeId + "#" + callId + "]";
  }
}
