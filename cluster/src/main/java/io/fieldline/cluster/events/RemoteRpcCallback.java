package io.fieldline.cluster.events;

import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.RpcDelivered;
import io.fieldline.cluster.internal.proto.RpcProgress;
import io.fieldline.cluster.internal.proto.RpcResponded;
import io.fieldline.cluster.internal.proto.RpcSent;
import io.fieldline.cluster.internal.proto.RpcUndelivered;
import io.fieldline.cluster.internal.proto.Uuid;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;

/**
 * The callback a listener on this node gets for an RPC whose caller waits on another node (the
 * origin): each step becomes an {@code RpcProgress} report sent to the origin on this node's event
 * stream to it, so the reports of one RPC arrive in the order the session made them. There the
 * origin's {@link RpcCalls} passes them to the real callback.
 *
 * <p>Only the steps the caller needs are sent: every step of a persistent request (each is a status
 * the origin stores), but for a lightweight one only its end — {@code responded} for a two-way
 * call, {@code delivered} for a one-way call — and {@code undelivered}, which lets the origin offer
 * it again. That is one report per lightweight call instead of three, on the stream that also
 * carries the node's events.
 *
 * <p>Fire-and-forget: a report that cannot be sent, or is not answered in time, is counted and
 * logged by the sender; the caller then gets no more progress and its RPC times out. Whether the
 * call is settled is the real callback's business. Thread-safe, never blocks.
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
  private final boolean persistent;
  private final boolean oneway;
  private final ProgressSender sender;

  RemoteRpcCallback(String originNodeId, long callId, ToDeviceRpc rpc, ProgressSender sender) {
    this.originNodeId = originNodeId;
    this.callId = callId;
    this.rpcId = MessageCodec.uuid(rpc.id());
    this.persistent = rpc.persistent();
    this.oneway = rpc.oneway();
    this.sender = sender;
  }

  @Override
  public void sent() {
    if (persistent) {
      report(report().setSent(RpcSent.getDefaultInstance()));
    }
  }

  @Override
  public void delivered() {
    if (persistent || oneway) {
      report(report().setDelivered(RpcDelivered.getDefaultInstance()));
    }
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
