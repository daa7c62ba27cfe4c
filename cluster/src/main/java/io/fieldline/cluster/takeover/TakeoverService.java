package io.fieldline.cluster.takeover;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.TakeoverOutcome;
import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.CloseSessionReply;
import io.fieldline.cluster.internal.proto.CloseSessionRequest;
import io.fieldline.cluster.internal.proto.SessionTakeoverGrpc;
import io.fieldline.common.DeviceId;
import io.fieldline.common.port.SessionCloser;
import io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives takeover notices: a device connected to another node, so this node closes its own
 * session of that device through the transport's session closer, unless its session is newer than
 * the notice (the device came back here meanwhile). Runs on the gRPC executor; the closer must not
 * block (the transport's hops to the channel's event loop).
 */
public final class TakeoverService extends SessionTakeoverGrpc.SessionTakeoverImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(TakeoverService.class);

  private final String selfId;
  private final LocalSessions sessions;
  private final SessionCloser sessionCloser;
  private final ClusterMetrics metrics;

  /**
   * @param sessionCloser closes this node's session of a device, if it has one
   */
  public TakeoverService(
      String selfId, LocalSessions sessions, SessionCloser sessionCloser, ClusterMetrics metrics) {
    this.selfId = selfId;
    this.sessions = sessions;
    this.sessionCloser = sessionCloser;
    this.metrics = metrics;
  }

  @Override
  public void closeSession(CloseSessionRequest request, StreamObserver<CloseSessionReply> reply) {
    DeviceId device = MessageCodec.deviceId(request.getDeviceId());
    boolean closed = false;
    if (!sessions.openedAfter(device, request.getOpenedAt())) {
      metrics.takeover(TakeoverOutcome.CLOSED_LOCAL);
      closed = sessionCloser.closeSession(device);
      LOG.debug(
          "[takeover|{}] device {} connected to {}: {}",
          selfId,
          device,
          request.getOriginNodeId(),
          closed ? "closing its session here" : "no session of it here");
    } else {
      LOG.debug(
          "[takeover|{}] device {} reconnected here after it connected to {}: kept",
          selfId,
          device,
          request.getOriginNodeId());
      metrics.takeover(TakeoverOutcome.KEPT_NEWER);
    }
    reply.onNext(CloseSessionReply.newBuilder().setClosed(closed).build());
    reply.onCompleted();
  }
}
