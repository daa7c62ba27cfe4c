package io.fieldline.cluster.forward;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.internal.proto.DeviceForwardingGrpc;
import io.fieldline.cluster.internal.proto.ForwardReply;
import io.fieldline.cluster.internal.proto.ForwardRequest;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.port.DeviceInbox;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The owner's end of the forwarding stream: submits each forwarded message to this node's local
 * gateway (its device actor) and streams back the acknowledgement with the request's {@code seq}.
 *
 * <p>Flow control is manual, like grpc-java's manual-flow-control example: the stream starts with a
 * window of {@code window} requests and grants one more each time a reply went out, so at most
 * {@code window} messages of one sender are being stored here at once; beyond that the sender's
 * {@code isReady()} turns false and its messages wait on its side.
 *
 * <p>A message is refused with {@code UNAVAILABLE} while this node does not claim ownership (lost
 * ZooKeeper, not registered): the sender's ring is out of date and the device will retry. A node
 * that does claim accepts every forwarded message, also for a device its own ring gives to another
 * node (rings disagree for a moment during a rebalance), and never forwards it again: no loops.
 *
 * <p>Threads: gRPC calls {@code onNext} of one stream serially on the transport's event loop
 * ({@link #onEventLoop}: a forwarded message is handed on at once, without a hop through the node's
 * gRPC executor); replies are sent from whichever thread completes the acknowledgement, serialized
 * by a per-stream lock.
 */
public final class ForwardingService extends DeviceForwardingGrpc.DeviceForwardingImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(ForwardingService.class);

  /**
   * Runs a task on the calling thread: gRPC's direct executor. For the forwarding stream only,
   * whose callbacks never block ({@link DeviceInbox#submit} does not, and replies are serialized by
   * a short lock). Each hop through a thread pool costs a wake-up on the way in and out: with a
   * pool a bare gRPC message and its reply cost 1.6 – 1.8 times the CPU they cost with this
   * (bench/grpc/GrpcFloor.java; docs/performance.md, issue 29's third session).
   */
  public static final Executor DIRECT = Runnable::run;

  /**
   * The server's per-call executor choice: {@link #DIRECT} for the forwarding method, the node's
   * gRPC executor (null) for every other call.
   */
  public static ServerCallExecutorSupplier onEventLoop() {
    return new ServerCallExecutorSupplier() {
      @Override
      public <ReqT, RespT> @Nullable Executor getExecutor(
          ServerCall<ReqT, RespT> call, Metadata metadata) {
        return DeviceForwardingGrpc.getForwardMethod()
                .getFullMethodName()
                .equals(call.getMethodDescriptor().getFullMethodName())
            ? DIRECT
            : null;
      }
    };
  }

  private final String nodeId;
  private final DeviceInbox local;
  private final BooleanSupplier claiming;
  private final int window;
  private final ClusterMetrics metrics;

  /**
   * @param local this node's gateway (device actors)
   * @param claiming whether this node currently claims ownership of devices
   * @param window requests granted per stream ({@code max-inflight-per-peer})
   */
  public ForwardingService(
      String nodeId,
      DeviceInbox local,
      BooleanSupplier claiming,
      int window,
      ClusterMetrics metrics) {
    this.nodeId = nodeId;
    this.local = local;
    this.claiming = claiming;
    this.window = window;
    this.metrics = metrics;
  }

  @Override
  public StreamObserver<ForwardRequest> forward(StreamObserver<ForwardReply> responseObserver) {
    ServerCallStreamObserver<ForwardReply> replies =
        (ServerCallStreamObserver<ForwardReply>) responseObserver;
    InboundStream stream = new InboundStream(replies);
    replies.disableAutoRequest();
    replies.setOnCancelHandler(stream::onCancel);
    replies.request(window);
    return stream;
  }

  /** One sender's stream. */
  private final class InboundStream implements StreamObserver<ForwardRequest> {

    private final ServerCallStreamObserver<ForwardReply> replies;
    private final Object lock = new Object();
    private int outstanding;
    private boolean halfClosed;
    private boolean done;

    InboundStream(ServerCallStreamObserver<ForwardReply> replies) {
      this.replies = replies;
    }

    @Override
    public void onNext(ForwardRequest request) {
      synchronized (lock) {
        outstanding++;
      }
      metrics.received();
      long seq = request.getSeq();
      CompletionStage<Ack> ack;
      if (!claiming.getAsBoolean()) {
        ack =
            CompletableFuture.completedFuture(
                Ack.rejected(
                    Ack.Reason.UNAVAILABLE,
                    "node "
                        + nodeId
                        + " does not claim devices (ZooKeeper connection or registration"
                        + " missing)"));
      } else {
        try {
          ack = local.submit(MessageCodec.message(request));
        } catch (IllegalArgumentException e) {
          ack =
              CompletableFuture.completedFuture(
                  Ack.rejected(
                      Ack.Reason.WRITE_FAILED, "malformed forwarded message: " + e.getMessage()));
        } catch (RuntimeException e) {
          ack =
              CompletableFuture.completedFuture(
                  Ack.rejected(Ack.Reason.WRITE_FAILED, "local gateway failed: " + e));
        }
      }
      ack.whenComplete((outcome, error) -> answer(seq, outcome, error));
    }

    private void answer(long seq, @Nullable Ack outcome, @Nullable Throwable error) {
      Ack ack =
          outcome != null
              ? outcome
              : Ack.rejected(Ack.Reason.WRITE_FAILED, "local gateway failed: " + error);
      synchronized (lock) {
        outstanding--;
        if (done) {
          return; // the sender is gone; it has failed this message itself
        }
        try {
          replies.onNext(MessageCodec.reply(seq, ack));
          replies.request(1);
          if (halfClosed && outstanding == 0) {
            done = true;
            replies.onCompleted();
          }
        } catch (RuntimeException e) {
          // Cancelled between the check and the send: the sender counts it as lost.
          done = true;
          LOG.debug("[forward|{}] reply not sent: {}", nodeId, e.toString());
        }
      }
    }

    @Override
    public void onError(Throwable error) {
      synchronized (lock) {
        done = true;
      }
      LOG.debug("[forward|{}] inbound stream ended: {}", nodeId, Status.fromThrowable(error));
    }

    @Override
    public void onCompleted() {
      synchronized (lock) {
        halfClosed = true;
        if (outstanding == 0 && !done) {
          done = true;
          replies.onCompleted();
        }
      }
    }

    void onCancel() {
      synchronized (lock) {
        done = true;
      }
    }
  }
}
