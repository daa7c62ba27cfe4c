package io.fieldline.cluster.revocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.RevocationOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.CredentialsRevocationGrpc;
import io.fieldline.cluster.internal.proto.RevokeCredentialsReply;
import io.fieldline.cluster.internal.proto.RevokeCredentialsRequest;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Revocation notices over gRPC's in-process transport: node "a" tells nodes "b" and "c". */
class RevocationTest {

  private static final DeviceId DEVICE = DeviceId.parse("7c9e6679-7425-40de-944b-e07fc1f90ae7");

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final ClusterMetrics metrics = new ClusterMetrics(new SimpleMeterRegistry());
  private final Map<String, Server> servers = new ConcurrentHashMap<>();
  private final Map<String, List<DeviceId>> revoked = new ConcurrentHashMap<>();
  private final List<Member> members = new CopyOnWriteArrayList<>();
  private final PeerChannels channels =
      new PeerChannels(
          (id, member) -> InProcessChannelBuilder.forName(member.grpc()).directExecutor().build(),
          timer,
          Duration.ofSeconds(1));

  private void node(String id, BindableService service) throws IOException {
    String name = InProcessServerBuilder.generateName();
    servers.put(
        id,
        InProcessServerBuilder.forName(name).directExecutor().addService(service).build().start());
    members.add(new Member(id, "h:1", "h:2", name));
  }

  /** A node whose local revocation records the device. */
  private void receiver(String id) throws IOException {
    List<DeviceId> log = new CopyOnWriteArrayList<>();
    revoked.put(id, log);
    node(id, new RevocationService(id, recorder(log), metrics));
  }

  private static CredentialsRevocation recorder(List<DeviceId> log) {
    return device -> {
      log.add(device);
      return CompletableFuture.completedFuture(null);
    };
  }

  private GrpcCredentialsRevocation revocation(int maxPending) {
    List<DeviceId> local = new CopyOnWriteArrayList<>();
    revoked.put("a", local);
    return new GrpcCredentialsRevocation(
        "a", () -> members, channels, recorder(local), Duration.ofSeconds(5), maxPending, metrics);
  }

  @AfterEach
  void stop() {
    channels.close();
    servers.values().forEach(Server::shutdownNow);
    timer.shutdownNow();
  }

  @Test
  void should_revoke_here_and_on_every_other_node_before_completing() throws IOException {
    receiver("b");
    receiver("c");
    members.add(new Member("a", "h:1", "h:2", "unused-self"));

    CompletableFuture<Void> done = revocation(100).revoke(DEVICE).toCompletableFuture();

    assertThat(done).succeedsWithin(Duration.ofSeconds(5));
    assertThat(revoked.get("a")).containsExactly(DEVICE);
    assertThat(revoked.get("b")).containsExactly(DEVICE);
    assertThat(revoked.get("c")).containsExactly(DEVICE);
    assertThat(metrics.revocations(RevocationOutcome.SENT)).isEqualTo(2);
    assertThat(metrics.revocations(RevocationOutcome.RECEIVED)).isEqualTo(2);
  }

  @Test
  void should_wait_for_a_slow_node_then_complete_when_it_answers() throws IOException {
    List<StreamObserver<RevokeCredentialsReply>> held = new ArrayList<>();
    node(
        "slow",
        new CredentialsRevocationGrpc.CredentialsRevocationImplBase() {
          @Override
          public void revokeCredentials(
              RevokeCredentialsRequest request, StreamObserver<RevokeCredentialsReply> reply) {
            held.add(reply);
          }
        });
    GrpcCredentialsRevocation revocation = revocation(100);

    CompletableFuture<Void> done = revocation.revoke(DEVICE).toCompletableFuture();

    assertThat(done).as("the slow node has not answered").isNotDone();
    assertThat(revocation.pending()).isEqualTo(1);
    held.get(0).onNext(RevokeCredentialsReply.getDefaultInstance());
    held.get(0).onCompleted();
    assertThat(done).succeedsWithin(Duration.ofSeconds(5));
    assertThat(revocation.pending()).isZero();
  }

  @Test
  void should_count_a_failure_and_still_complete_when_a_node_is_down() throws IOException {
    receiver("b");
    servers.remove("b").shutdownNow();
    receiver("c");

    CompletableFuture<Void> done = revocation(100).revoke(DEVICE).toCompletableFuture();

    assertThat(done).succeedsWithin(Duration.ofSeconds(5));
    assertThat(revoked.get("c")).containsExactly(DEVICE);
    assertThat(metrics.revocations(RevocationOutcome.FAILED)).isEqualTo(1);
  }

  @Test
  void should_drop_notices_beyond_the_bound_and_complete_anyway() throws IOException {
    List<StreamObserver<RevokeCredentialsReply>> held = new ArrayList<>();
    node(
        "silent",
        new CredentialsRevocationGrpc.CredentialsRevocationImplBase() {
          @Override
          public void revokeCredentials(
              RevokeCredentialsRequest request, StreamObserver<RevokeCredentialsReply> reply) {
            held.add(reply); // never answers
          }
        });
    GrpcCredentialsRevocation revocation = revocation(1);

    CompletableFuture<Void> first = revocation.revoke(DEVICE).toCompletableFuture();
    CompletableFuture<Void> second = revocation.revoke(DeviceId.random()).toCompletableFuture();

    assertThat(second).as("dropped: nothing to wait for").isDone();
    assertThat(first).isNotDone();
    assertThat(metrics.revocations(RevocationOutcome.DROPPED)).isEqualTo(1);
  }
}
