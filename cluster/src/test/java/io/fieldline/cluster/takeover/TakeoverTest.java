package io.fieldline.cluster.takeover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.TakeoverOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.forward.MessageCodec;
import io.fieldline.cluster.internal.proto.CloseSessionReply;
import io.fieldline.cluster.internal.proto.CloseSessionRequest;
import io.fieldline.cluster.internal.proto.SessionTakeoverGrpc;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Takeover notices over gRPC's in-process transport: node "a" tells nodes "b" and "c". */
class TakeoverTest {

  private static final DeviceId DEVICE = DeviceId.parse("7c9e6679-7425-40de-944b-e07fc1f90ae7");

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final ClusterMetrics metrics = new ClusterMetrics(new SimpleMeterRegistry());
  private final Map<String, Server> servers = new ConcurrentHashMap<>();
  private final Map<String, List<DeviceId>> closed = new ConcurrentHashMap<>();
  private final Map<String, LocalSessions> sessions = new ConcurrentHashMap<>();
  private final List<Member> members = new CopyOnWriteArrayList<>();
  private final PeerChannels channels =
      new PeerChannels(
          (id, member) -> InProcessChannelBuilder.forName(member.grpc()).directExecutor().build(),
          timer,
          Duration.ofSeconds(1));

  private Member node(String id, BindableService service) throws IOException {
    String name = InProcessServerBuilder.generateName();
    servers.put(
        id,
        InProcessServerBuilder.forName(name).directExecutor().addService(service).build().start());
    Member member = new Member(id, "h:1", "h:2", name);
    members.add(member);
    return member;
  }

  private Member receiver(String id) throws IOException {
    LocalSessions local = new LocalSessions(60_000);
    sessions.put(id, local);
    List<DeviceId> log = new CopyOnWriteArrayList<>();
    closed.put(id, log);
    return node(id, new TakeoverService(id, local, log::add, metrics));
  }

  private GrpcSessionTakeover takeover(int maxPending, Clock clock) {
    Collection<Member> view = members;
    return new GrpcSessionTakeover(
        "a",
        () -> view,
        channels,
        new LocalSessions(60_000),
        Duration.ofSeconds(5),
        maxPending,
        metrics,
        clock);
  }

  @AfterEach
  void stop() {
    channels.close();
    servers.values().forEach(Server::shutdownNow);
    timer.shutdownNow();
  }

  @Test
  void should_close_the_session_on_every_other_node_when_the_device_connects_here()
      throws IOException {
    receiver("b");
    receiver("c");
    members.add(new Member("a", "h:1", "h:2", "unused-self"));
    GrpcSessionTakeover takeover = takeover(100, Clock.systemUTC());
    takeover.sessionOpened(DEVICE);
    await().atMost(Duration.ofSeconds(5)).until(() -> metrics.takeovers(TakeoverOutcome.SENT) == 2);
    assertThat(closed.get("b")).containsExactly(DEVICE);
    assertThat(closed.get("c")).containsExactly(DEVICE);
    assertThat(takeover.pending()).isZero();
  }

  @Test
  void should_keep_the_local_session_when_it_is_newer_than_the_notice() throws IOException {
    receiver("b");
    long now = System.currentTimeMillis();
    sessions.get("b").opened(DEVICE, now + 60_000); // the device came back to b after a's notice
    takeover(100, Clock.systemUTC()).sessionOpened(DEVICE);
    await().atMost(Duration.ofSeconds(5)).until(() -> metrics.takeovers(TakeoverOutcome.SENT) == 1);
    assertThat(closed.get("b")).isEmpty();
    assertThat(metrics.takeovers(TakeoverOutcome.KEPT_NEWER)).isEqualTo(1);

    sessions.get("b").prune(now + 200_000);
    takeover(100, Clock.systemUTC()).sessionOpened(DEVICE);
    await().atMost(Duration.ofSeconds(5)).until(() -> closed.get("b").size() == 1);
  }

  @Test
  void should_drop_notices_beyond_the_bound_when_peers_do_not_answer() throws IOException {
    List<StreamObserver<CloseSessionReply>> held = new ArrayList<>();
    node(
        "silent",
        new SessionTakeoverGrpc.SessionTakeoverImplBase() {
          @Override
          public void closeSession(
              CloseSessionRequest request, StreamObserver<CloseSessionReply> reply) {
            held.add(reply); // never answers
          }
        });
    GrpcSessionTakeover takeover = takeover(2, Clock.systemUTC());
    for (int i = 0; i < 3; i++) {
      takeover.sessionOpened(DeviceId.random());
    }
    assertThat(takeover.pending()).isEqualTo(2);
    assertThat(metrics.takeovers(TakeoverOutcome.DROPPED)).isEqualTo(1);
    held.forEach(
        reply -> {
          reply.onNext(CloseSessionReply.getDefaultInstance());
          reply.onCompleted();
        });
    await().atMost(Duration.ofSeconds(5)).until(() -> takeover.pending() == 0);
  }

  @Test
  void should_count_a_failure_and_carry_on_when_a_peer_is_down() throws IOException {
    receiver("b");
    servers.remove("b").shutdownNow();
    receiver("c");
    takeover(100, Clock.systemUTC()).sessionOpened(DEVICE);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> metrics.takeovers(TakeoverOutcome.FAILED) == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> closed.get("c").size() == 1);
  }

  @Test
  void should_answer_closed_only_when_the_transport_had_a_session_of_the_device() {
    Set<DeviceId> open = ConcurrentHashMap.newKeySet();
    open.add(DEVICE);
    TakeoverService service =
        new TakeoverService("b", new LocalSessions(60_000), open::remove, metrics);
    CloseSessionRequest request =
        CloseSessionRequest.newBuilder()
            .setDeviceId(MessageCodec.uuid(DEVICE))
            .setOriginNodeId("a")
            .setOpenedAt(System.currentTimeMillis())
            .build();
    List<CloseSessionReply> replies = new ArrayList<>();
    StreamObserver<CloseSessionReply> collect =
        new StreamObserver<>() {
          @Override
          public void onNext(CloseSessionReply reply) {
            replies.add(reply);
          }

          @Override
          public void onError(Throwable error) {
            throw new AssertionError(error);
          }

          @Override
          public void onCompleted() {}
        };

    service.closeSession(request, collect);
    service.closeSession(request, collect); // the session is already gone

    assertThat(open).isEmpty();
    assertThat(replies).extracting(CloseSessionReply::getClosed).containsExactly(true, false);
    assertThat(metrics.takeovers(TakeoverOutcome.CLOSED_LOCAL)).isEqualTo(2);
  }
}
