package io.fieldline.cluster.forward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.FailureReason;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceForwardingGrpc;
import io.fieldline.cluster.internal.proto.SessionTakeoverGrpc;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.PressureGauge;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallExecutorSupplier;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The forwarding stream end to end over gRPC's in-process transport with direct executors (the
 * grpc-java HelloWorldServerTest set-up): the sender's {@link Forwarder} and the owner's {@link
 * ForwardingService} with a {@link FakeDeviceInbox} whose acknowledgements the test completes.
 */
class ForwardingTest {

  private static final Member OWNER =
      new Member("owner", "127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3");
  private static final DeviceId DEVICE = DeviceId.parse("7c9e6679-7425-40de-944b-e07fc1f90ae7");

  private final String serverName = InProcessServerBuilder.generateName();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final AtomicBoolean claiming = new AtomicBoolean(true);
  private final ClusterMetrics senderMetrics = new ClusterMetrics(new SimpleMeterRegistry());
  private final ClusterMetrics ownerMetrics = new ClusterMetrics(new SimpleMeterRegistry());
  private final PressureGauge pressure = new PressureGauge("forwarding", 1, 0);
  private FakeDeviceInbox owner;
  private Server server;
  private PeerChannels channels;
  private Forwarder forwarder;

  private void start(boolean autoStore, int window, int maxInflight, Duration timeout)
      throws IOException {
    owner = new FakeDeviceInbox(autoStore);
    startOwner(window);
    channels =
        new PeerChannels(
            (id, member) -> InProcessChannelBuilder.forName(serverName).directExecutor().build(),
            timer,
            Duration.ofSeconds(1));
    forwarder =
        new Forwarder("sender", channels, timeout, maxInflight, timer, senderMetrics, pressure);
  }

  private void startOwner(int window) throws IOException {
    server =
        InProcessServerBuilder.forName(serverName)
            .directExecutor()
            .addService(new ForwardingService("owner", owner, claiming::get, window, ownerMetrics))
            .build()
            .start();
  }

  @AfterEach
  void stop() {
    if (forwarder != null) {
      forwarder.close();
    }
    if (channels != null) {
      channels.close();
    }
    if (server != null) {
      server.shutdownNow();
    }
    timer.shutdownNow();
  }

  private static DeviceMessage telemetry(long seq) {
    return new DeviceMessage.PostTelemetry(
        DEVICE, seq, List.of(new TsKvEntry(1_700_000_000_000L + seq, KvEntry.of("seq", seq))));
  }

  private List<CompletableFuture<Ack>> forward(int from, int to) {
    List<CompletableFuture<Ack>> acks = new ArrayList<>();
    for (int i = from; i < to; i++) {
      acks.add(forwarder.forward(OWNER, telemetry(i)).toCompletableFuture());
    }
    return acks;
  }

  @Test
  void should_deliver_a_devices_messages_in_order_when_forwarded_to_the_owner() throws IOException {
    start(true, 16, 256, Duration.ofSeconds(10));
    List<CompletableFuture<Ack>> acks = forward(0, 200);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> acks.stream().allMatch(CompletableFuture::isDone));
    assertThat(acks).allSatisfy(ack -> assertThat(ack.join().isStored()).isTrue());
    List<Long> expected = new ArrayList<>();
    for (long i = 0; i < 200; i++) {
      expected.add(i);
    }
    assertThat(owner.receivedAts()).isEqualTo(expected);
    assertThat(owner.get(0).message()).isEqualTo(telemetry(0));
    assertThat(senderMetrics.forwardedInflight()).isZero();
  }

  @Test
  void should_answer_each_message_with_its_own_outcome_when_the_owner_answers_out_of_order()
      throws IOException {
    start(false, 16, 64, Duration.ofSeconds(10));
    List<CompletableFuture<Ack>> acks = forward(0, 10);
    await().atMost(Duration.ofSeconds(5)).until(() -> owner.count() == 10);
    for (int i = 9; i >= 0; i--) {
      owner
          .get(i)
          .ack()
          .complete(
              i % 2 == 0
                  ? Ack.stored()
                  : Ack.rejected(Ack.Reason.WRITE_FAILED, "write " + i + " failed"));
    }
    for (int i = 0; i < 10; i++) {
      Ack ack = acks.get(i).join();
      if (i % 2 == 0) {
        assertThat(ack.isStored()).isTrue();
      } else {
        assertThat(ack).isEqualTo(Ack.rejected(Ack.Reason.WRITE_FAILED, "write " + i + " failed"));
      }
    }
    assertThat(senderMetrics.forwardFailures(FailureReason.OWNER_REJECTED)).isEqualTo(5);
  }

  @Test
  void should_hold_messages_at_the_sender_when_the_owner_grants_no_more_requests()
      throws IOException {
    start(false, 8, 64, Duration.ofSeconds(10));
    List<CompletableFuture<Ack>> acks = forward(0, 20);
    await().atMost(Duration.ofSeconds(5)).until(() -> owner.count() == 8);
    assertThat(owner.count()).as("the owner's window is 8 requests").isEqualTo(8);
    assertThat(forwarder.inflight("owner")).isEqualTo(20);

    owner.get(0).ack().complete(Ack.stored());
    await().atMost(Duration.ofSeconds(5)).until(() -> owner.count() == 9);
    assertThat(acks.get(0).join().isStored()).isTrue();

    owner.autoStore(true);
    for (int i = 1; i < 9; i++) {
      owner.get(i).ack().complete(Ack.stored());
    }
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> acks.stream().allMatch(CompletableFuture::isDone));
    assertThat(owner.count()).isEqualTo(20);
    assertThat(acks).allSatisfy(ack -> assertThat(ack.join().isStored()).isTrue());
  }

  @Test
  void should_reject_as_overloaded_when_max_inflight_messages_wait_for_the_owner()
      throws IOException {
    start(false, 64, 4, Duration.ofSeconds(10));
    List<CompletableFuture<Ack>> acks = forward(0, 4);
    CompletableFuture<Ack> fifth = forwarder.forward(OWNER, telemetry(4)).toCompletableFuture();
    assertThat(fifth).isCompleted();
    assertThat(fifth.join())
        .isInstanceOfSatisfying(
            Ack.Rejected.class,
            rejected -> assertThat(rejected.reason()).isEqualTo(Ack.Reason.OVERLOADED));
    assertThat(acks).noneMatch(CompletableFuture::isDone);
    assertThat(senderMetrics.forwardFailures(FailureReason.OVERLOADED)).isEqualTo(1);
  }

  @Test
  void should_reject_the_message_when_the_owner_does_not_answer_before_the_deadline()
      throws IOException {
    start(false, 64, 16, Duration.ofMillis(300));
    CompletableFuture<Ack> ack = forward(0, 1).get(0);
    await().atMost(Duration.ofSeconds(5)).until(ack::isDone);
    assertThat(ack.join())
        .isInstanceOfSatisfying(
            Ack.Rejected.class,
            rejected -> assertThat(rejected.reason()).isEqualTo(Ack.Reason.UNAVAILABLE));
    assertThat(senderMetrics.forwardFailures(FailureReason.TIMEOUT)).isEqualTo(1);
    assertThat(forwarder.inflight("owner")).isZero();

    owner.get(0).ack().complete(Ack.stored()); // too late: the sender has given up on it
    assertThat(ack.join().isStored()).isFalse();
  }

  @Test
  void should_never_ack_stored_when_the_owner_dies_with_messages_in_flight() throws IOException {
    start(false, 64, 64, Duration.ofSeconds(10));
    List<CompletableFuture<Ack>> acks = forward(0, 10);
    await().atMost(Duration.ofSeconds(5)).until(() -> owner.count() == 10);
    server.shutdownNow();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> acks.stream().allMatch(CompletableFuture::isDone));
    assertThat(acks)
        .allSatisfy(
            ack ->
                assertThat(ack.join())
                    .isInstanceOfSatisfying(
                        Ack.Rejected.class,
                        r -> assertThat(r.reason()).isEqualTo(Ack.Reason.UNAVAILABLE)));
    assertThat(senderMetrics.forwardFailures(FailureReason.STREAM_BROKEN)).isEqualTo(10);
    // Completing the dead owner's acks now changes nothing.
    owner.submitted().forEach(s -> s.ack().complete(Ack.stored()));
    assertThat(acks).noneMatch(ack -> ack.join().isStored());

    // The owner comes back: the next message opens a new stream.
    owner = new FakeDeviceInbox(true);
    startOwner(64);
    CompletableFuture<Ack> after = forward(10, 11).get(0);
    await().atMost(Duration.ofSeconds(5)).until(after::isDone);
    assertThat(after.join().isStored()).isTrue();
  }

  @Test
  void should_refuse_forwarded_messages_when_the_owner_does_not_claim_devices() throws IOException {
    start(true, 64, 64, Duration.ofSeconds(10));
    claiming.set(false);
    Ack ack = forward(0, 1).get(0).join();
    assertThat(ack)
        .isInstanceOfSatisfying(
            Ack.Rejected.class, r -> assertThat(r.reason()).isEqualTo(Ack.Reason.UNAVAILABLE));
    assertThat(owner.count()).isZero();
  }

  @Test
  void should_pause_the_transport_when_a_peer_is_saturated_and_resume_at_half() throws IOException {
    start(false, 64, 8, Duration.ofSeconds(10));
    forward(0, 5);
    assertThat(pressure.isOverloaded()).isFalse();
    forward(5, 6); // 6 = three quarters of 8
    assertThat(pressure.isOverloaded()).isTrue();
    await().atMost(Duration.ofSeconds(5)).until(() -> owner.count() == 6);
    owner.get(0).ack().complete(Ack.stored());
    assertThat(pressure.isOverloaded()).isTrue();
    owner.get(1).ack().complete(Ack.stored()); // 4 = half
    assertThat(pressure.isOverloaded()).isFalse();
  }

  @Test
  void should_reject_unsent_messages_and_finish_sent_ones_when_the_owner_leaves_the_ring()
      throws IOException {
    start(false, 2, 16, Duration.ofSeconds(10));
    List<CompletableFuture<Ack>> acks = forward(0, 5);
    await().atMost(Duration.ofSeconds(5)).until(() -> owner.count() == 2);
    forwarder.retainOnly(Set.of());
    assertThat(acks.subList(2, 5))
        .allSatisfy(
            ack ->
                assertThat(ack.join())
                    .isInstanceOfSatisfying(
                        Ack.Rejected.class,
                        r -> assertThat(r.reason()).isEqualTo(Ack.Reason.UNAVAILABLE)));
    owner.get(0).ack().complete(Ack.stored());
    owner.get(1).ack().complete(Ack.stored());
    await().atMost(Duration.ofSeconds(5)).until(() -> acks.get(1).isDone());
    assertThat(acks.get(0).join().isStored()).isTrue();
    assertThat(acks.get(1).join().isStored()).isTrue();
    assertThat(owner.count()).isEqualTo(2);
  }

  @Test
  void should_run_only_the_forwarding_call_on_the_transport_thread() {
    ServerCallExecutorSupplier executors = ForwardingService.onEventLoop();
    assertThat(executors.getExecutor(call(DeviceForwardingGrpc.getForwardMethod()), new Metadata()))
        .isSameAs(ForwardingService.DIRECT);
    assertThat(
            executors.getExecutor(
                call(SessionTakeoverGrpc.getCloseSessionMethod()), new Metadata()))
        .as("other calls keep the node's gRPC executor")
        .isNull();
  }

  /** A server call that knows only its method: what the executor choice looks at. */
  private static <Q, R> ServerCall<Q, R> call(MethodDescriptor<Q, R> method) {
    return new ServerCall<>() {
      @Override
      public void request(int numMessages) {}

      @Override
      public void sendHeaders(Metadata headers) {}

      @Override
      public void sendMessage(R message) {}

      @Override
      public void close(Status status, Metadata trailers) {}

      @Override
      public boolean isCancelled() {
        return false;
      }

      @Override
      public MethodDescriptor<Q, R> getMethodDescriptor() {
        return method;
      }
    };
  }
}
