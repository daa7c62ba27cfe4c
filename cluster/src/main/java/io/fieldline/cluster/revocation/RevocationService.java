package io.fieldline.cluster.revocation;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.RevocationOutcome;
import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.CredentialsRevocationGrpc;
import io.fieldline.cluster.internal.proto.RevokeCredentialsReply;
import io.fieldline.cluster.internal.proto.RevokeCredentialsRequest;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives revocation notices: a device's credential changed (or the device was deleted) on another
 * node, so this node runs its local revocation (forgets its cached lookups of the device, closes
 * its session of it) and answers once that is done. Unlike a takeover notice, there is no newer
 * local session to keep: whatever session the device has here was opened with the old credential.
 * Runs on the gRPC executor; the local revocation must not block.
 */
public final class RevocationService
    extends CredentialsRevocationGrpc.CredentialsRevocationImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(RevocationService.class);

  private final String selfId;
  private final CredentialsRevocation local;
  private final ClusterMetrics metrics;

  /**
   * @param local this node's own revocation; never the cluster's (a notice is not passed on)
   */
  public RevocationService(String selfId, CredentialsRevocation local, ClusterMetrics metrics) {
    this.selfId = selfId;
    this.local = local;
    this.metrics = metrics;
  }

  @Override
  public void revokeCredentials(
      RevokeCredentialsRequest request, StreamObserver<RevokeCredentialsReply> reply) {
    DeviceId device = MessageCodec.deviceId(request.getDeviceId());
    local
        .revoke(device)
        .whenComplete(
            (done, error) -> {
              if (error != null) {
                reply.onError(
                    Status.INTERNAL
                        .withDescription("revocation failed: " + error)
                        .asRuntimeException());
                return;
              }
              metrics.revocation(RevocationOutcome.RECEIVED);
              LOG.debug(
                  "[revocation|{}] device {}: credentials changed on {}, forgotten here",
                  selfId,
                  device,
                  request.getOriginNodeId());
              reply.onNext(RevokeCredentialsReply.getDefaultInstance());
              reply.onCompleted();
            });
  }
}
