package io.fieldline.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.cluster.forward.FakeDeviceInbox;
import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.CredentialsRevocation;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cluster nodes in this JVM against a real ZooKeeper (Curator {@code TestingServer}, fresh per
 * test) and real gRPC over TCP on 127.0.0.1, with fake local gateways. The process-level tests are
 * in the server module.
 */
class ClusterNodeIT {

  /** One node under test with what it saw. */
  private record Node(
      ClusterNode cluster,
      FakeDeviceInbox local,
      List<DeviceId> closed,
      List<DeviceId> revoked,
      List<ClusterView> views) {

    Set<String> ring() {
      return cluster.view().ring().nodes();
    }
  }

  private TestingServer zookeeper;
  private final List<Node> nodes = new ArrayList<>();

  @BeforeEach
  void startZooKeeper() throws Exception {
    // 200 ms ticks: sessions may be as short as 400 ms (ZooKeeper allows 2..20 ticks).
    zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 200, -1), true);
  }

  @AfterEach
  void stopAll() throws Exception {
    for (Node node : nodes) {
      node.cluster().close();
    }
    zookeeper.close();
  }

  private Node start(String id, String rebalanceDelay) {
    ClusterConfig config =
        TestClusterConfig.of(
            zookeeper.getConnectString(),
            id,
            "rebalance-delay = " + rebalanceDelay,
            "forward-timeout = 5 s",
            "zookeeper-session-timeout = 2 s",
            "zookeeper-connection-timeout = 2 s");
    FakeDeviceInbox local = new FakeDeviceInbox(true);
    List<DeviceId> closed = new CopyOnWriteArrayList<>();
    List<DeviceId> revoked = new CopyOnWriteArrayList<>();
    List<ClusterView> views = new CopyOnWriteArrayList<>();
    CredentialsRevocation localRevocation =
        device -> {
          revoked.add(device);
          return CompletableFuture.completedFuture(null);
        };
    ClusterNode cluster =
        ClusterNode.start(
            config,
            local,
            closed::add,
            localRevocation,
            new LocalDeviceEvents(),
            new SimpleMeterRegistry());
    cluster.addViewListener(views::add);
    Node node = new Node(cluster, local, closed, revoked, views);
    nodes.add(node);
    cluster.join(1883, 8080);
    return node;
  }

  private static DeviceMessage telemetry(DeviceId device, long seq) {
    return new DeviceMessage.PostTelemetry(
        device, seq, List.of(new TsKvEntry(1_700_000_000_000L + seq, KvEntry.of("seq", seq))));
  }

  private static DeviceId deviceOwnedBy(Node node) {
    while (true) {
      DeviceId device = DeviceId.random();
      if (node.cluster().nodeId().equals(node.cluster().view().ring().ownerOf(device))) {
        return device;
      }
    }
  }

  @Test
  void should_see_each_other_and_build_the_same_ring_when_two_members_join() {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> a.ring().equals(Set.of("a", "b")));
    assertThat(b.ring()).isEqualTo(Set.of("a", "b"));
    assertThat(a.cluster().claiming()).isTrue();
    assertThat(b.cluster().view().members().get("a").grpc())
        .isEqualTo("127.0.0.1:" + a.cluster().grpcPort());
    for (int i = 0; i < 1_000; i++) {
      DeviceId device = DeviceId.random();
      assertThat(a.cluster().gateway().ownerOf(device))
          .isEqualTo(b.cluster().gateway().ownerOf(device));
    }
  }

  @Test
  void should_store_at_the_owner_and_return_its_ack_when_the_device_is_owned_by_the_other_node() {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> a.ring().size() == 2 && b.ring().size() == 2);
    DeviceId remote = deviceOwnedBy(b);
    DeviceId local = deviceOwnedBy(a);
    List<CompletableFuture<Ack>> acks = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      acks.add(a.cluster().gateway().submit(telemetry(remote, i)).toCompletableFuture());
    }
    Ack own = a.cluster().gateway().submit(telemetry(local, 0)).toCompletableFuture().join();
    assertThat(acks).allSatisfy(ack -> assertThat(ack.join().isStored()).isTrue());
    assertThat(own.isStored()).isTrue();
    assertThat(b.local().receivedAts()).hasSize(50).isSorted();
    assertThat(b.local().submitted()).allMatch(s -> s.message().deviceId().equals(remote));
    assertThat(a.local().submitted())
        .extracting(s -> s.message().deviceId())
        .containsExactly(local);
    assertThat(a.cluster().metrics().forwardedInflight()).isZero();
  }

  @Test
  void should_close_the_other_nodes_session_when_the_device_connects_here() {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> a.cluster().view().members().size() == 2);
    DeviceId device = DeviceId.random();
    a.cluster().sessionTakeover().sessionOpened(device);
    await().atMost(Duration.ofSeconds(10)).until(() -> b.closed().contains(device));
    assertThat(a.closed()).isEmpty();
  }

  @Test
  void should_revoke_on_every_node_before_answering_when_a_credential_changes_here() {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    Node c = start("c", "0 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> a.cluster().view().members().size() == 3);
    DeviceId device = DeviceId.random();

    assertThat(a.cluster().credentialsRevocation().revoke(device).toCompletableFuture())
        .succeedsWithin(Duration.ofSeconds(10));

    // Answered only once done everywhere: no waiting needed.
    assertThat(a.revoked()).containsExactly(device);
    assertThat(b.revoked()).containsExactly(device);
    assertThat(c.revoked()).containsExactly(device);
    assertThat(a.cluster().metrics().revocations(ClusterMetrics.RevocationOutcome.SENT))
        .isEqualTo(2);
  }

  @Test
  void should_leave_the_ring_and_come_back_when_its_zookeeper_session_expires() throws Exception {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> b.ring().equals(Set.of("a", "b")));
    a.views().clear();
    b.views().clear();

    a.cluster()
        .membership()
        .client()
        .getZookeeperClient()
        .getZooKeeper()
        .getTestable()
        .injectSessionExpiration();

    // a stops claiming at once; b drops a once the server expired a's old session; a re-registers
    // in its new session and both rings hold both nodes again.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                a.views().stream()
                    .anyMatch(view -> !view.claiming() && !view.ring().contains("a")));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> b.views().stream().anyMatch(view -> !view.ring().contains("a")));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                a.cluster().claiming()
                    && a.ring().equals(Set.of("a", "b"))
                    && b.ring().equals(Set.of("a", "b")));
  }

  @Test
  void should_claim_again_when_the_server_expired_its_session_while_it_was_away() throws Exception {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> b.ring().equals(Set.of("a", "b")));
    a.views().clear();

    // The server ends a's session (as after a long pause): a second client takes the session
    // over and closes it. a misses the deletion of its znode and finds its session expired.
    ZooKeeper zk = a.cluster().membership().client().getZookeeperClient().getZooKeeper();
    ZooKeeper killer =
        new ZooKeeper(
            zookeeper.getConnectString(),
            2_000,
            event -> {},
            zk.getSessionId(),
            zk.getSessionPasswd());
    await().atMost(Duration.ofSeconds(10)).until(() -> killer.getState().isConnected());
    killer.close();

    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> a.views().stream().anyMatch(view -> !view.claiming()));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                a.cluster().claiming()
                    && a.ring().equals(Set.of("a", "b"))
                    && b.ring().equals(Set.of("a", "b")));
  }

  @Test
  void should_move_nothing_when_a_member_comes_back_within_the_rebalance_delay() {
    Node a = start("a", "0 s");
    Node b = start("b", "3 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> b.ring().equals(Set.of("a", "b")));
    b.views().clear();
    a.cluster().leave();
    a.cluster().join(1883, 8080);
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(6))
        .until(() -> b.ring().equals(Set.of("a", "b")));
    assertThat(b.views())
        .allSatisfy(view -> assertThat(view.ring().nodes()).containsExactly("a", "b"));
  }

  @Test
  void should_stop_claiming_when_zookeeper_is_down_and_claim_again_when_it_is_back()
      throws Exception {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> a.ring().size() == 2 && b.ring().size() == 2);
    DeviceId device = deviceOwnedBy(b);

    zookeeper.stop();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> !a.cluster().claiming() && !b.cluster().claiming());
    // Nobody owns anything: the message is refused, never acknowledged.
    Ack refused = b.cluster().gateway().submit(telemetry(device, 1)).toCompletableFuture().join();
    assertThat(refused.isStored()).isFalse();

    zookeeper.restart();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                a.cluster().claiming()
                    && b.cluster().claiming()
                    && a.ring().size() == 2
                    && b.ring().size() == 2);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                b.cluster()
                    .gateway()
                    .submit(telemetry(device, 2))
                    .toCompletableFuture()
                    .join()
                    .isStored());
  }

  @Test
  void should_reject_in_flight_messages_and_take_over_the_devices_when_the_owner_goes_away() {
    Node a = start("a", "0 s");
    Node b = start("b", "0 s");
    await().atMost(Duration.ofSeconds(10)).until(() -> a.ring().size() == 2);
    DeviceId device = deviceOwnedBy(b);
    b.local().autoStore(false); // b's writes hang
    List<CompletableFuture<Ack>> acks = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      acks.add(a.cluster().gateway().submit(telemetry(device, i)).toCompletableFuture());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> b.local().count() == 10);

    b.cluster().close();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> acks.stream().allMatch(CompletableFuture::isDone));
    assertThat(acks).noneMatch(ack -> ack.join().isStored());
    b.local().submitted().forEach(s -> s.ack().complete(Ack.stored())); // too late
    assertThat(acks).noneMatch(ack -> ack.join().isStored());

    await().atMost(Duration.ofSeconds(10)).until(() -> a.ring().equals(Set.of("a")));
    assertThat(
            a.cluster()
                .gateway()
                .submit(telemetry(device, 10))
                .toCompletableFuture()
                .join()
                .isStored())
        .isTrue();
    assertThat(a.local().submitted())
        .extracting(s -> s.message().receivedAt())
        .containsExactly(10L);
  }
}
