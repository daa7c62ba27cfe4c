package io.fieldline.cluster.revocation;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.RevocationOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.CredentialsRevocationGrpc;
import io.fieldline.cluster.internal.proto.RevokeCredentialsReply;
import io.fieldline.cluster.internal.proto.RevokeCredentialsRequest;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.log.LogThrottle;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@link CredentialsRevocation}: revokes on this node (its {@code local} revocation:
 * cache and session), and tells every other member, by a unary gRPC call with a deadline, to do the
 * same ({@link RevocationService}). The returned stage completes once this node is done and every
 * other member answered, failed or ran out of its deadline, so the REST call that changed a
 * credential answers only when every reachable node has forgotten the old one.
 *
 * <p>A member that is not told (unreachable, deadline passed, or {@code maxPending} notices already
 * in flight) keeps serving its cached lookups of the device until its cache's ttl expires, and an
 * open session of the device on it stays open; such notices are counted ({@code
 * fieldline.cluster.revocations{outcome=failed|dropped}}) and logged (one WARN per 10 s at most).
 * Nothing is retried: the change itself is stored, and the ttl bounds the staleness.
 *
 * <p>Thread-safe; {@link #revoke} never blocks (it is called on the REST API's threads).
 */
public final class GrpcCredentialsRevocation implements CredentialsRevocation {

  private static final Logger LOG = LoggerFactory.getLogger(GrpcCredentialsRevocation.class);

  private final String selfId;
  private final Supplier<Collection<Member>> members;
  private final PeerChannels channels;
  private final CredentialsRevocation local;
  private final Duration timeout;
  private final int maxPending;
  private final ClusterMetrics metrics;
  private final AtomicInteger pending = new AtomicInteger();
  private final LogThrottle warnings = new LogThrottle();
  // Put before every throttled line; node ids are validated to a safe alphabet (no {}).
  private final String warnPrefix;

  /**
   * @param members the current members (this node among them or not)
   * @param local this node's own revocation (forget the cached lookups, close the session)
   * @param timeout the deadline of one notice
   * @param maxPending most notices in flight; more are dropped
   */
  public GrpcCredentialsRevocation(
      String selfId,
      Supplier<Collection<Member>> members,
      PeerChannels channels,
      CredentialsRevocation local,
      Duration timeout,
      int maxPending,
      ClusterMetrics metrics) {
    this.selfId = selfId;
    this.members = members;
    this.channels = channels;
    this.local = local;
    this.timeout = timeout;
    this.maxPending = maxPending;
    this.metrics = metrics;
    this.warnPrefix = "[revocation|" + selfId + "] ";
  }

  @Override
  public CompletionStage<Void> revoke(DeviceId device) {
    List<CompletableFuture<Void>> done = new ArrayList<>();
    done.add(
        local
            .revoke(device)
            .toCompletableFuture()
            .exceptionally(
                error -> {
                  warn("revoking device {} here failed: {}", device, error);
                  return null;
                }));
    RevokeCredentialsRequest request =
        RevokeCredentialsRequest.newBuilder()
            .setDeviceId(MessageCodec.uuid(device))
            .setOriginNodeId(selfId)
            .build();
    for (Member member : members.get()) {
      if (!member.nodeId().equals(selfId)) {
        done.add(tell(member, device, request));
      }
    }
    return CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0]));
  }

  /** Notices in flight. */
  public int pending() {
    return pending.get();
  }

  // Completes normally whatever happens: a peer that could not be told is counted and logged.
  private CompletableFuture<Void> tell(
      Member member, DeviceId device, RevokeCredentialsRequest request) {
    CompletableFuture<Void> answered = new CompletableFuture<>();
    if (pending.incrementAndGet() > maxPending) {
      pending.decrementAndGet();
      metrics.revocation(RevocationOutcome.DROPPED);
      warn(
          "revocation of device {} not sent to {}: {} notices in flight",
          device,
          member.nodeId(),
          maxPending);
      answered.complete(null);
      return answered;
    }
    try {
      CredentialsRevocationGrpc.newStub(channels.channel(member))
          .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
          .revokeCredentials(request, new Outcome(device, member, answered));
    } catch (RuntimeException e) {
      pending.decrementAndGet();
      metrics.revocation(RevocationOutcome.FAILED);
      warn("revocation of device {} not sent to {}: {}", device, member.nodeId(), e);
      answered.complete(null);
    }
    return answered;
  }

  private void warn(String format, Object... args) {
    warnings.warnElseDebug(LOG, warnPrefix + format, args);
  }

  private final class Outcome implements StreamObserver<RevokeCredentialsReply> {
    private final DeviceId device;
    private final Member member;
    private final CompletableFuture<Void> answered;

    Outcome(DeviceId device, Member member, CompletableFuture<Void> answered) {
      this.device = device;
      this.member = member;
      this.answered = answered;
    }

    @Override
    public void onNext(RevokeCredentialsReply reply) {}

    @Override
    public void onError(Throwable error) {
      pending.decrementAndGet();
      metrics.revocation(RevocationOutcome.FAILED);
      warn(
          "revocation of device {} on {} failed ({}): it keeps its cached lookups of the device"
              + " until they expire",
          device,
          member.nodeId(),
          Status.fromThrowable(error).getCode());
      answered.complete(null);
    }

    @Override
    public void onCompleted() {
      pending.decrementAndGet();
      metrics.revocation(RevocationOutcome.SENT);
      answered.complete(null);
    }
  }
}
