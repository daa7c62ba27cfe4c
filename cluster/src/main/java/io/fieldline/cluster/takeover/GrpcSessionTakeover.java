package io.fieldline.cluster.takeover;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.TakeoverOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.CloseSessionReply;
import io.fieldline.cluster.internal.proto.CloseSessionRequest;
import io.fieldline.cluster.internal.proto.SessionTakeoverGrpc;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.port.SessionTakeover;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster's {@link SessionTakeover}: when a device's session is accepted here, every other
 * member is told, by a unary gRPC call with a deadline, to close its own session of that device.
 * Fire-and-forget: the transport is not held up, a failed notice is counted and logged (at most one
 * WARN per 10 s), and an old session that was not closed ends by its keep-alive timeout.
 *
 * <p>At most {@code maxPending} notices are in flight; more are dropped and counted. Thread-safe;
 * {@link #sessionOpened} is called on Netty event loops and never blocks.
 */
public final class GrpcSessionTakeover implements SessionTakeover {

  private static final Logger LOG = LoggerFactory.getLogger(GrpcSessionTakeover.class);

  private final String selfId;
  private final Supplier<Collection<Member>> members;
  private final PeerChannels channels;
  private final LocalSessions sessions;
  private final Duration timeout;
  private final int maxPending;
  private final ClusterMetrics metrics;
  private final Clock clock;
  private final AtomicInteger pending = new AtomicInteger();
  private final LogThrottle warnings = new LogThrottle();
  // Put before every throttled line; node ids are validated to a safe alphabet (no {}).
  private final String warnPrefix;

  /**
   * @param members the current members (this node among them or not)
   * @param sessions where this node's own session openings are recorded
   */
  public GrpcSessionTakeover(
      String selfId,
      Supplier<Collection<Member>> members,
      PeerChannels channels,
      LocalSessions sessions,
      Duration timeout,
      int maxPending,
      ClusterMetrics metrics,
      Clock clock) {
    this.selfId = selfId;
    this.members = members;
    this.channels = channels;
    this.sessions = sessions;
    this.timeout = timeout;
    this.maxPending = maxPending;
    this.metrics = metrics;
    this.warnPrefix = "[takeover|" + selfId + "] ";
    this.clock = clock;
  }

  @Override
  public void sessionOpened(DeviceId device) {
    long now = clock.millis();
    sessions.opened(device, now);
    CloseSessionRequest request =
        CloseSessionRequest.newBuilder()
            .setDeviceId(MessageCodec.uuid(device))
            .setOriginNodeId(selfId)
            .setOpenedAt(now)
            .build();
    for (Member member : members.get()) {
      if (member.nodeId().equals(selfId)) {
        continue;
      }
      if (pending.incrementAndGet() > maxPending) {
        pending.decrementAndGet();
        metrics.takeover(TakeoverOutcome.DROPPED);
        warn(
            "takeover notice for device {} to {} dropped: {} notices in flight",
            device,
            member.nodeId(),
            maxPending);
        continue;
      }
      try {
        SessionTakeoverGrpc.newStub(channels.channel(member))
            .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
            .closeSession(request, new Outcome(device, member));
      } catch (RuntimeException e) {
        pending.decrementAndGet();
        metrics.takeover(TakeoverOutcome.FAILED);
        warn("takeover notice for device {} to {} not sent: {}", device, member.nodeId(), e);
      }
    }
  }

  /** Notices in flight. */
  public int pending() {
    return pending.get();
  }

  private void warn(String format, Object... args) {
    warnings.warnElseDebug(LOG, warnPrefix + format, args);
  }

  private final class Outcome implements StreamObserver<CloseSessionReply> {
    private final DeviceId device;
    private final Member member;

    Outcome(DeviceId device, Member member) {
      this.device = device;
      this.member = member;
    }

    @Override
    public void onNext(CloseSessionReply reply) {}

    @Override
    public void onError(Throwable error) {
      pending.decrementAndGet();
      metrics.takeover(TakeoverOutcome.FAILED);
      warn(
          "takeover notice for device {} to {} failed: {}",
          device,
          member.nodeId(),
          Status.fromThrowable(error).getCode());
    }

    @Override
    public void onCompleted() {
      pending.decrementAndGet();
      metrics.takeover(TakeoverOutcome.SENT);
    }
  }
}
