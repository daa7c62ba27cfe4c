package io.fieldline.cluster.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.cluster.ClusterConfig;
import io.fieldline.cluster.ClusterMetrics.EventSendOutcome;
import io.fieldline.cluster.ClusterNode;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.TestClusterConfig;
import io.fieldline.cluster.forward.FakeDeviceInbox;
import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Device events between {@link ClusterNode}s in this JVM: a real ZooKeeper (Curator {@code
 * TestingServer}, fresh per test) tells who the members are, and the events travel over real gRPC
 * on 127.0.0.1. The listeners stand in for MQTT sessions.
 */
class DeviceEventsIT {

  private static final Duration EVENT_TIMEOUT = Duration.ofSeconds(1);

  /** One node under test and its own listeners. */
  private record Node(ClusterNode cluster, LocalDeviceEvents local) {
    int publish(DeviceEvent event) {
      return cluster
          .deviceEvents()
          .publish(event)
          .toCompletableFuture()
          .orTimeout(10, TimeUnit.SECONDS)
          .join();
    }
  }

  private TestingServer zookeeper;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void startZooKeeper() throws Exception {
    zookeeper = new TestingServer(true);
  }

  @AfterEach
  void stopAll() throws Exception {
    for (AutoCloseable closeable : closing) {
      closeable.close();
    }
    zookeeper.close();
  }

  private Node start(String id) {
    ClusterConfig config =
        TestClusterConfig.of(
            zookeeper.getConnectString(),
            id,
            "event-timeout = " + EVENT_TIMEOUT.toMillis() + " ms",
            "zookeeper-session-timeout = 4 s",
            "zookeeper-connection-timeout = 4 s");
    LocalDeviceEvents local = new LocalDeviceEvents();
    ClusterNode cluster =
        ClusterNode.start(
            config,
            new FakeDeviceInbox(true),
            device -> false,
            device -> CompletableFuture.completedFuture(null),
            local,
            new SimpleMeterRegistry());
    closing.add(cluster);
    cluster.join(1883, 8080);
    return new Node(cluster, local);
  }

  private static void awaitMembers(int count, Node... nodes) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              for (Node node : nodes) {
                if (node.cluster().view().members().size() != count) {
                  return false;
                }
              }
              return true;
            });
  }

  /**
   * Waits until every node's event stream to every other node answers: the streams open lazily on
   * the first event, and on a loaded machine opening one can take longer than the 1 s event
   * deadline, which would count a first event as unanswered. The answered warm-up events are left
   * in the metrics; tests that count events read differences.
   */
  private static void awaitStreams(Node... nodes) {
    for (Node to : nodes) {
      DeviceId probe = DeviceId.random();
      DeviceEvents.Subscription listening = to.local().subscribe(probe, event -> true);
      try {
        for (Node from : nodes) {
          if (from != to) {
            await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> from.publish(attribute(probe, 0)) == 1);
          }
        }
      } finally {
        listening.close();
      }
    }
  }

  private static DeviceEvent attribute(DeviceId device, long value) {
    return new DeviceEvent.AttributesUpdated(
        device,
        AttributeScope.SHARED_SCOPE,
        List.of(new AttributeKvEntry(1_700_000_000_000L + value, KvEntry.of("v", value))));
  }

  private static DeviceEvent.RpcRequested rpc(
      DeviceId device, long timeoutMillis, RpcCallback callback) {
    ToDeviceRpc rpc =
        new ToDeviceRpc(
            UUID.randomUUID(),
            device,
            "setGpio",
            "{\"pin\":4}",
            false,
            true, // persistent: every step is reported (a lightweight call only its end)
            timeoutMillis,
            0,
            0,
            null);
    return new DeviceEvent.RpcRequested(device, rpc, callback);
  }

  /** A listener on {@code node} that takes every RPC of {@code device}; returns their callbacks. */
  private static List<RpcCallback> takeRpcs(Node node, DeviceId device) {
    List<RpcCallback> callbacks = new CopyOnWriteArrayList<>();
    node.local()
        .subscribe(
            device,
            event -> event instanceof DeviceEvent.RpcRequested r && callbacks.add(r.callback()));
    return callbacks;
  }

  @Test
  void should_reach_the_session_on_another_node_in_order_when_published_on_any_node() {
    Node a = start("a");
    Node b = start("b");
    Node c = start("c");
    awaitMembers(3, a, b, c);
    awaitStreams(a, b, c);
    DeviceId device = DeviceId.random();
    List<DeviceEvent> onB = new CopyOnWriteArrayList<>();
    b.local().subscribe(device, onB::add);

    assertThat(a.publish(attribute(device, 0))).isEqualTo(1);
    assertThat(c.publish(attribute(device, 1))).isEqualTo(1);
    assertThat(b.publish(attribute(device, 2))).isEqualTo(1);
    assertThat(a.publish(attribute(DeviceId.random(), 3))).as("nobody listens").isZero();

    List<CompletableFuture<Integer>> counts = new ArrayList<>();
    List<DeviceEvent> expected = new ArrayList<>(onB);
    for (int i = 4; i < 104; i++) {
      expected.add(attribute(device, i));
      counts.add(a.cluster().deviceEvents().publish(attribute(device, i)).toCompletableFuture());
    }
    assertThat(counts)
        .allSatisfy(count -> assertThat(count).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(1));
    assertThat(onB).isEqualTo(expected);
  }

  @Test
  void should_carry_each_rpc_step_back_to_the_callers_node_in_order_when_another_node_takes_it() {
    Node a = start("a");
    Node b = start("b");
    awaitMembers(2, a, b);
    awaitStreams(a, b);
    DeviceId device = DeviceId.random();
    List<RpcCallback> onB = takeRpcs(b, device);
    RecordingCallback caller = new RecordingCallback();

    assertThat(a.publish(rpc(device, 10_000, caller))).isEqualTo(1);
    onB.get(0).sent();
    onB.get(0).delivered();
    onB.get(0).responded("{\"pin\":4,\"value\":1}");

    await().atMost(Duration.ofSeconds(5)).until(() -> caller.steps.size() == 3);
    assertThat(caller.steps)
        .containsExactly("sent", "delivered", "responded:{\"pin\":4,\"value\":1}");
    assertThat(a.cluster().metrics().rpcCallsPending()).isZero();
  }

  @Test
  void should_count_a_member_that_does_not_answer_as_none_and_answer_within_the_deadline()
      throws Exception {
    Node a = start("a");
    Node b = start("b");
    awaitMembers(2, a, b);
    awaitStreams(a, b);
    double answeredBefore = a.cluster().metrics().eventsSent(EventSendOutcome.ANSWERED);
    double timedOutBefore = a.cluster().metrics().eventsSent(EventSendOutcome.TIMEOUT);
    // A member that registered but whose gRPC port accepts connections and never speaks.
    ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    closing.add(blackHole);
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100));
    closing.add(client);
    client.start();
    Member ghost =
        new Member("ghost", "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:" + blackHole.getLocalPort());
    client
        .create()
        .creatingParentsIfNeeded()
        .withMode(CreateMode.EPHEMERAL)
        .forPath("/fieldline/nodes/ghost", ghost.toJson());
    awaitMembers(3, a, b);
    DeviceId device = DeviceId.random();
    b.local().subscribe(device, event -> true);

    long start = System.nanoTime();
    int taken = a.publish(attribute(device, 1));

    assertThat(taken).isEqualTo(1);
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(EVENT_TIMEOUT)
        .isLessThan(EVENT_TIMEOUT.multipliedBy(3));
    assertThat(a.cluster().metrics().eventsSent(EventSendOutcome.TIMEOUT) - timedOutBefore)
        .isEqualTo(1);
    assertThat(a.cluster().metrics().eventsSent(EventSendOutcome.ANSWERED) - answeredBefore)
        .isEqualTo(1);
  }

  @Test
  void should_give_the_caller_no_more_progress_when_the_sessions_node_goes_away() {
    Node a = start("a");
    Node b = start("b");
    awaitMembers(2, a, b);
    awaitStreams(a, b);
    DeviceId device = DeviceId.random();
    List<RpcCallback> onB = takeRpcs(b, device);
    RecordingCallback caller = new RecordingCallback();
    assertThat(a.publish(rpc(device, 500, caller))).isEqualTo(1);
    onB.get(0).sent();
    await().atMost(Duration.ofSeconds(5)).until(() -> caller.steps.equals(List.of("sent")));

    b.cluster().close();
    onB.get(0).delivered(); // the session's node is stopping: nothing leaves it any more

    // The caller's node forgets the call once its timeout and the event deadline have passed.
    await().atMost(Duration.ofSeconds(5)).until(() -> a.cluster().metrics().rpcCallsPending() == 0);
    assertThat(caller.steps).containsExactly("sent");
    assertThat(a.publish(attribute(device, 1))).as("b is gone").isZero();
  }
}
