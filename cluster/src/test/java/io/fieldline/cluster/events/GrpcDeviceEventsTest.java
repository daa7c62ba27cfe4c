package io.fieldline.cluster.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.cluster.ClusterMetrics;
import io.fieldline.cluster.ClusterMetrics.EventReceiveOutcome;
import io.fieldline.cluster.ClusterMetrics.EventSendOutcome;
import io.fieldline.cluster.ClusterMetrics.ProgressReceiveOutcome;
import io.fieldline.cluster.Member;
import io.fieldline.cluster.internal.proto.DeviceEventsGrpc;
import io.fieldline.cluster.internal.proto.Event;
import io.fieldline.cluster.internal.proto.EventEnvelope;
import io.fieldline.cluster.internal.proto.EventReceipt;
import io.fieldline.cluster.peer.PeerChannels;
import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Device events between nodes over gRPC's in-process transport, on thread pools as in production
 * (not direct executors: a listener on one node reports to another while the first still sends).
 * Node "a" publishes; "b" and "c" listen, or a silent member takes messages and never answers.
 */
class GrpcDeviceEventsTest {

  private static final DeviceId DEVICE = DeviceId.parse("7c9e6679-7425-40de-944b-e07fc1f90ae7");
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  /** One node under test. */
  private record Node(
      String id, LocalDeviceEvents local, GrpcDeviceEvents events, ClusterMetrics metrics) {}

  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final Map<String, Member> members = new ConcurrentHashMap<>();
  private final List<Server> servers = new CopyOnWriteArrayList<>();
  private final List<AutoCloseable> closing = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable closeable : closing) {
      closeable.close();
    }
    for (Server server : servers) {
      server.shutdownNow().awaitTermination(1, TimeUnit.SECONDS);
    }
    executor.shutdownNow();
    timer.shutdownNow();
  }

  private Node node(String id) throws IOException {
    return node(id, TIMEOUT, 100, 100);
  }

  private Node node(String id, Duration timeout, int maxInflight, int maxCalls) throws IOException {
    LocalDeviceEvents local = new LocalDeviceEvents();
    ClusterMetrics metrics = new ClusterMetrics(new SimpleMeterRegistry());
    PeerChannels channels =
        new PeerChannels(
            (peer, member) ->
                InProcessChannelBuilder.forName(member.grpc()).executor(executor).build(),
            timer,
            Duration.ofSeconds(1));
    GrpcDeviceEvents events =
        new GrpcDeviceEvents(
            id, () -> members, channels, local, timeout, maxInflight, maxCalls, timer, metrics);
    closing.add(events);
    closing.add(channels);
    serve(id, events.service());
    return new Node(id, local, events, metrics);
  }

  private void serve(String id, BindableService service) throws IOException {
    String name = InProcessServerBuilder.generateName();
    servers.add(
        InProcessServerBuilder.forName(name)
            .executor(executor)
            .addService(service)
            .build()
            .start());
    members.put(id, new Member(id, "h:1", "h:2", name));
  }

  /** Records what a stream delivers, and nothing else. */
  private static final class Recorder<T> implements StreamObserver<T> {
    final List<T> received = new CopyOnWriteArrayList<>();

    @Override
    public void onNext(T value) {
      received.add(value);
    }

    @Override
    public void onError(Throwable error) {}

    @Override
    public void onCompleted() {}
  }

  /** A member that takes every message and never answers; returns what it was sent. */
  private List<EventEnvelope> silent(String id) throws IOException {
    Recorder<EventEnvelope> recorder = new Recorder<>();
    serve(
        id,
        new DeviceEventsGrpc.DeviceEventsImplBase() {
          @Override
          public StreamObserver<EventEnvelope> exchange(StreamObserver<EventReceipt> receipts) {
            return recorder;
          }
        });
    return recorder.received;
  }

  private static DeviceEvent.AttributesUpdated attribute(long value) {
    return new DeviceEvent.AttributesUpdated(
        DEVICE,
        AttributeScope.SHARED_SCOPE,
        List.of(new AttributeKvEntry(1_700_000_000_000L + value, KvEntry.of("v", value))));
  }

  private static DeviceEvent.RpcRequested rpc(long timeoutMillis, RpcCallback callback) {
    return rpc(timeoutMillis, 60_000, false, callback);
  }

  /** A two-way RPC that expires {@code expiresInMillis} from now. */
  private static DeviceEvent.RpcRequested rpc(
      long timeoutMillis, long expiresInMillis, boolean persistent, RpcCallback callback) {
    ToDeviceRpc rpc =
        new ToDeviceRpc(
            UUID.randomUUID(),
            DEVICE,
            "setGpio",
            "{\"pin\":4,\"value\":1}",
            false,
            persistent,
            timeoutMillis,
            System.currentTimeMillis() + expiresInMillis,
            0,
            null);
    return new DeviceEvent.RpcRequested(DEVICE, rpc, callback);
  }

  /** Subscribes a listener on {@code node} that takes every RPC; returns their callbacks. */
  private static List<RpcCallback> takeRpcs(Node node) {
    List<RpcCallback> taken = new CopyOnWriteArrayList<>();
    node.local()
        .subscribe(
            DEVICE,
            event -> event instanceof DeviceEvent.RpcRequested r && taken.add(r.callback()));
    return taken;
  }

  /**
   * Offers {@code request} to {@code node} as the member {@code origin} would (origin may be a fake
   * member that is not a {@link GrpcDeviceEvents}); returns the callback a listener there took.
   */
  private RpcCallback offerFrom(String origin, Node node, DeviceEvent.RpcRequested request) {
    List<RpcCallback> taken = takeRpcs(node);
    ManagedChannel channel =
        InProcessChannelBuilder.forName(members.get(node.id()).grpc()).executor(executor).build();
    closing.add(channel::shutdownNow);
    DeviceEventsGrpc.newStub(channel)
        .exchange(new Recorder<>())
        .onNext(
            EventEnvelope.newBuilder()
                .setSeq(1)
                .setEvent(EventCodec.event(request, origin, 42))
                .build());
    await().atMost(TIMEOUT).until(() -> taken.size() == 1);
    return taken.get(0);
  }

  private static int publish(Node node, DeviceEvent event) {
    return node.events()
        .publish(event)
        .toCompletableFuture()
        .orTimeout(10, TimeUnit.SECONDS)
        .join();
  }

  @Test
  void should_count_the_listeners_of_every_node_when_an_event_is_published_on_one()
      throws IOException {
    Node a = node("a");
    Node b = node("b");
    Node c = node("c");
    List<DeviceEvent> onA = new CopyOnWriteArrayList<>();
    List<DeviceEvent> onB = new CopyOnWriteArrayList<>();
    List<DeviceEvent> onC = new CopyOnWriteArrayList<>();
    a.local().subscribe(DEVICE, onA::add);
    b.local().subscribe(DEVICE, onB::add);
    c.local().subscribe(DEVICE, event -> !onC.add(event)); // hears it, does not take it
    c.local().subscribe(DeviceId.random(), event -> true); // another device's listener

    assertThat(publish(a, attribute(1))).isEqualTo(2);

    assertThat(onA).containsExactly(attribute(1));
    assertThat(onB).containsExactly(attribute(1));
    assertThat(onC).containsExactly(attribute(1));
    assertThat(b.metrics().eventsReceived(EventReceiveOutcome.TAKEN)).isEqualTo(1);
    assertThat(c.metrics().eventsReceived(EventReceiveOutcome.NOT_TAKEN)).isEqualTo(1);
    assertThat(a.metrics().eventsSent(EventSendOutcome.ANSWERED)).isEqualTo(2);
    assertThat(a.metrics().eventsInflight()).isZero();
  }

  @Test
  void should_reach_only_the_named_nodes_when_an_event_is_published_to_some() throws IOException {
    Node a = node("a");
    Node b = node("b");
    Node c = node("c");
    List<DeviceEvent> onA = new CopyOnWriteArrayList<>();
    List<DeviceEvent> onB = new CopyOnWriteArrayList<>();
    List<DeviceEvent> onC = new CopyOnWriteArrayList<>();
    a.local().subscribe(DEVICE, onA::add);
    b.local().subscribe(DEVICE, onB::add);
    c.local().subscribe(DEVICE, onC::add);
    DeviceEvent stored =
        new DeviceEvent.TelemetryStored(DEVICE, List.of(new TsKvEntry(1, KvEntry.of("t", 1L))));

    int taken =
        a.events()
            .publishTo(Set.of("b"), stored)
            .toCompletableFuture()
            .orTimeout(10, TimeUnit.SECONDS)
            .join();

    assertThat(taken).isEqualTo(1);
    assertThat(onB).containsExactly(stored);
    assertThat(onA).as("this node was not named").isEmpty();
    assertThat(onC).isEmpty();
  }

  @Test
  void should_drop_stored_telemetry_beyond_its_own_allowance_and_still_send_other_events()
      throws IOException {
    Node a = node("a", Duration.ofSeconds(30), 2, 100);
    List<EventEnvelope> sent = silent("b");
    DeviceEvent stored =
        new DeviceEvent.TelemetryStored(DEVICE, List.of(new TsKvEntry(1, KvEntry.of("t", 1L))));
    for (int i = 0; i < 3; i++) {
      a.events().publishTo(Set.of("b"), stored);
    }
    a.events().publish(attribute(1));

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(sent)
                    .extracting(envelope -> envelope.getEvent().getKindCase())
                    .containsExactly(
                        Event.KindCase.TELEMETRY_STORED,
                        Event.KindCase.TELEMETRY_STORED,
                        Event.KindCase.ATTRIBUTES_UPDATED));
    assertThat(a.metrics().eventsSent(EventSendOutcome.DROPPED)).isEqualTo(1);
  }

  @Test
  void should_keep_the_publish_order_when_a_device_gets_many_events_from_one_node()
      throws IOException {
    Node a = node("a");
    Node b = node("b");
    List<DeviceEvent> onB = new CopyOnWriteArrayList<>();
    b.local().subscribe(DEVICE, onB::add);
    List<CompletableFuture<Integer>> counts = new ArrayList<>();
    List<DeviceEvent> published = new ArrayList<>();
    for (int i = 0; i < 90; i++) {
      published.add(attribute(i));
      counts.add(a.events().publish(attribute(i)).toCompletableFuture());
    }
    assertThat(CompletableFuture.allOf(counts.toArray(CompletableFuture<?>[]::new)))
        .succeedsWithin(TIMEOUT);
    assertThat(onB).isEqualTo(published);
  }

  @Test
  void should_report_each_step_to_the_callers_node_in_order_when_another_node_takes_the_rpc()
      throws IOException {
    Node a = node("a");
    Node b = node("b");
    List<DeviceEvent.RpcRequested> taken = new CopyOnWriteArrayList<>();
    b.local()
        .subscribe(DEVICE, event -> event instanceof DeviceEvent.RpcRequested r && taken.add(r));
    RecordingCallback caller = new RecordingCallback();
    DeviceEvent.RpcRequested request = rpc(10_000, 60_000, true, caller);

    assertThat(publish(a, request)).isEqualTo(1);
    assertThat(taken).hasSize(1);
    assertThat(taken.get(0).rpc()).isEqualTo(request.rpc());
    assertThat(a.events().pendingCalls()).isEqualTo(1);
    RpcCallback remote = taken.get(0).callback();
    remote.sent();
    remote.delivered();
    remote.responded("{\"ok\":true}");

    await().atMost(TIMEOUT).until(() -> caller.steps.size() == 3);
    assertThat(caller.steps).containsExactly("sent", "delivered", "responded:{\"ok\":true}");
    assertThat(a.events().pendingCalls()).as("settled").isZero();
    assertThat(a.metrics().rpcCallsPending()).isZero();
    assertThat(a.metrics().progressReportsReceived(ProgressReceiveOutcome.DELIVERED)).isEqualTo(3);

    remote.responded("{\"late\":true}"); // a duplicate after the outcome
    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                a.metrics().progressReportsReceived(ProgressReceiveOutcome.UNKNOWN_CALL) == 1
                    && b.metrics().progressReportsSent(EventSendOutcome.ANSWERED) == 4);
    assertThat(caller.steps).hasSize(3);
  }

  @Test
  void should_forget_the_call_when_no_other_node_took_the_rpc() throws IOException {
    Node a = node("a");
    node("b");
    RecordingCallback caller = new RecordingCallback();

    assertThat(publish(a, rpc(60_000, caller))).isZero();

    assertThat(a.events().pendingCalls()).isZero();
  }

  @Test
  void should_forget_the_call_when_every_node_that_took_it_gave_it_up() throws IOException {
    Node a = node("a");
    Node b = node("b");
    List<RpcCallback> remote = takeRpcs(b);
    RecordingCallback caller = new RecordingCallback();

    assertThat(publish(a, rpc(60_000, caller))).isEqualTo(1);
    remote.get(0).undelivered("session closed");

    await().atMost(TIMEOUT).until(() -> a.events().pendingCalls() == 0);
    assertThat(caller.steps).containsExactly("undelivered:session closed");
  }

  @Test
  void should_forget_the_call_after_its_expiration_and_timeout_when_nobody_reports()
      throws IOException {
    Node a = node("a", Duration.ofMillis(100), 100, 100);
    silent("mute");

    a.events().publish(rpc(500, 500, false, new RecordingCallback()));

    assertThat(a.events().pendingCalls()).isEqualTo(1);
    await().atMost(TIMEOUT).until(() -> a.events().pendingCalls() == 0);
    assertThat(a.metrics().rpcCallsPending()).isZero();
  }

  @Test
  void should_count_a_node_as_none_when_it_does_not_answer_within_the_deadline()
      throws IOException {
    Node a = node("a", Duration.ofMillis(300), 100, 100);
    Node b = node("b");
    b.local().subscribe(DEVICE, event -> true);
    a.local().subscribe(DEVICE, event -> true);
    silent("mute");

    long start = System.nanoTime();
    assertThat(publish(a, attribute(1))).isEqualTo(2);

    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    assertThat(a.metrics().eventsSent(EventSendOutcome.TIMEOUT)).isEqualTo(1);
    assertThat(a.metrics().eventsSent(EventSendOutcome.ANSWERED)).isEqualTo(1);
  }

  @Test
  void should_count_a_node_as_none_when_it_is_down() throws IOException {
    Node a = node("a");
    members.put("gone", new Member("gone", "h:1", "h:2", InProcessServerBuilder.generateName()));

    assertThat(publish(a, attribute(1))).isZero();

    assertThat(a.metrics().eventsSent(EventSendOutcome.FAILED)).isEqualTo(1);
  }

  @Test
  void should_drop_events_beyond_the_in_flight_bound_when_a_node_does_not_answer()
      throws IOException {
    Node a = node("a", TIMEOUT, 2, 100);
    List<EventEnvelope> received = silent("mute");

    CompletableFuture<Integer> first = a.events().publish(attribute(1)).toCompletableFuture();
    CompletableFuture<Integer> second = a.events().publish(attribute(2)).toCompletableFuture();
    CompletableFuture<Integer> third = a.events().publish(attribute(3)).toCompletableFuture();

    assertThat(third).as("dropped: nothing to wait for").isCompletedWithValue(0);
    assertThat(first).isNotDone();
    assertThat(second).isNotDone();
    assertThat(a.events().inflight("mute")).isEqualTo(2);
    assertThat(a.metrics().eventsSent(EventSendOutcome.DROPPED)).isEqualTo(1);
    await().atMost(TIMEOUT).until(() -> received.size() == 2);
  }

  @Test
  void should_offer_an_rpc_here_only_when_too_many_callers_wait() throws IOException {
    Node a = node("a", TIMEOUT, 100, 1);
    List<EventEnvelope> received = silent("mute");
    a.local().subscribe(DEVICE, event -> true);

    CompletableFuture<Integer> first =
        a.events().publish(rpc(60_000, new RecordingCallback())).toCompletableFuture();
    CompletableFuture<Integer> second =
        a.events().publish(rpc(60_000, new RecordingCallback())).toCompletableFuture();

    assertThat(first).isNotDone();
    assertThat(second).as("this node's listener only").isCompletedWithValue(1);
    assertThat(a.metrics().rpcCallsRefused()).isEqualTo(1);
    assertThat(a.events().pendingCalls()).isEqualTo(1);
    await().atMost(TIMEOUT).until(() -> received.size() == 1);
  }

  @Test
  void should_report_only_the_end_of_a_lightweight_rpc() throws IOException {
    Node a = node("a");
    Node b = node("b");
    List<RpcCallback> remote = takeRpcs(b);
    RecordingCallback caller = new RecordingCallback();
    publish(a, rpc(10_000, caller));

    remote.get(0).sent();
    remote.get(0).delivered();
    remote.get(0).responded("{\"ok\":true}");

    await().atMost(TIMEOUT).until(() -> caller.steps.size() == 1);
    assertThat(caller.steps).containsExactly("responded:{\"ok\":true}");
    assertThat(b.metrics().progressReportsSent(EventSendOutcome.ANSWERED)).isEqualTo(1);
  }

  @Test
  void should_drop_the_report_when_the_callers_node_left() throws IOException {
    Node a = node("a");
    Node b = node("b");
    List<RpcCallback> remote = takeRpcs(b);
    publish(a, rpc(60_000, new RecordingCallback()));

    members.remove("a");
    remote.get(0).responded("{}");

    assertThat(b.metrics().progressReportsSent(EventSendOutcome.DROPPED)).isEqualTo(1);
  }

  @Test
  void should_answer_none_and_count_it_when_a_message_has_no_body() throws IOException {
    Node b = node("b");
    ManagedChannel channel =
        InProcessChannelBuilder.forName(members.get("b").grpc()).executor(executor).build();
    closing.add(channel::shutdownNow);
    Recorder<EventReceipt> recorder = new Recorder<>();
    List<EventReceipt> receipts = recorder.received;
    StreamObserver<EventEnvelope> requests = DeviceEventsGrpc.newStub(channel).exchange(recorder);

    requests.onNext(EventEnvelope.newBuilder().setSeq(7).build());

    await().atMost(TIMEOUT).until(() -> receipts.size() == 1);
    assertThat(receipts.get(0).getSeq()).isEqualTo(7);
    assertThat(receipts.get(0).getTaken()).isZero();
    assertThat(b.metrics().eventsReceived(EventReceiveOutcome.MALFORMED)).isEqualTo(1);
  }

  /**
   * Node "b" takes an RPC published on "a" (event-timeout 100 ms, RPC timeout 200 ms, expiring in 5
   * s); {@code session} runs 600 ms later, past timeout plus event-timeout. Returns the caller's
   * steps once it heard something, or once "a" dropped a report.
   */
  private List<String> stepsOfALateSession(boolean persistent, Consumer<RpcCallback> session)
      throws IOException {
    Node a = node("a", Duration.ofMillis(100), 100, 100);
    Node b = node("b");
    List<RpcCallback> remote = takeRpcs(b);
    RecordingCallback caller = new RecordingCallback();
    assertThat(publish(a, rpc(200, 5_000, persistent, caller))).isEqualTo(1);

    timer.schedule(() -> session.accept(remote.get(0)), 600, TimeUnit.MILLISECONDS);

    await()
        .atMost(TIMEOUT)
        .until(
            () ->
                caller.steps.stream().anyMatch(step -> step.startsWith("responded"))
                    || a.metrics().progressReportsReceived(ProgressReceiveOutcome.UNKNOWN_CALL)
                        > 0);
    return caller.steps;
  }

  @Test
  void should_pass_the_answer_to_a_lightweight_caller_that_waits_past_the_rpc_timeout()
      throws IOException {
    // A lightweight caller waits until the request's expirationTime, not its timeout.
    List<String> steps = stepsOfALateSession(false, session -> session.responded("{\"ok\":true}"));

    assertThat(steps).containsExactly("responded:{\"ok\":true}");
  }

  @Test
  void should_pass_the_answer_of_a_persistent_rpc_sent_long_after_it_was_taken()
      throws IOException {
    // The answer is due within the timeout after sent(), which may wait behind a full QoS 1 window.
    List<String> steps =
        stepsOfALateSession(
            true,
            session -> {
              session.sent();
              session.responded("{}");
            });

    assertThat(steps).containsExactly("sent", "responded:{}");
  }

  @Test
  void should_report_to_the_offer_a_session_took_when_an_rpc_is_offered_again() throws IOException {
    Node a = node("a", Duration.ofMillis(200), 100, 100);
    Node b = node("b");
    silent("mute");
    RecordingCallback caller = new RecordingCallback();
    DeviceEvent.RpcRequested request = rpc(10_000, caller);
    assertThat(publish(a, request)).as("nobody listens yet").isZero();
    assertThat(a.events().pendingCalls()).as("the mute node may have taken it").isEqualTo(1);

    List<RpcCallback> remote = takeRpcs(b);
    assertThat(publish(a, request)).as("offered again, same callback").isEqualTo(1);
    assertThat(a.events().pendingCalls()).isEqualTo(2);
    remote.get(0).responded("{}");

    await().atMost(TIMEOUT).until(() -> a.events().pendingCalls() == 1);
    assertThat(caller.steps).containsExactly("responded:{}");
  }

  @Test
  void should_send_a_progress_report_when_events_fill_the_stream_to_the_callers_node()
      throws IOException {
    List<EventEnvelope> onA = silent("a");
    Node b = node("b", TIMEOUT, 2, 100);
    RpcCallback remote = offerFrom("a", b, rpc(10_000, new RecordingCallback()));
    b.events().publish(attribute(1));
    b.events().publish(attribute(2));
    assertThat(b.events().inflight("a")).as("a never answers").isEqualTo(2);

    remote.responded("{}");

    assertThat(b.metrics().progressReportsSent(EventSendOutcome.DROPPED)).isZero();
    assertThat(b.events().inflight("a")).isEqualTo(3);
    await().atMost(TIMEOUT).until(() -> onA.stream().anyMatch(EventEnvelope::hasProgress));
  }

  /**
   * Serves member "a": its first {@code breaking} streams fail on their first message, unanswered;
   * later streams answer every message. Returns every message it was sent.
   */
  private List<EventEnvelope> breakingStreams(int breaking) throws IOException {
    List<EventEnvelope> received = new CopyOnWriteArrayList<>();
    AtomicInteger streams = new AtomicInteger();
    serve(
        "a",
        new DeviceEventsGrpc.DeviceEventsImplBase() {
          @Override
          public StreamObserver<EventEnvelope> exchange(StreamObserver<EventReceipt> receipts) {
            boolean breaks = streams.getAndIncrement() < breaking;
            return new StreamObserver<>() {
              @Override
              public void onNext(EventEnvelope envelope) {
                received.add(envelope);
                if (breaks) {
                  receipts.onError(Status.UNAVAILABLE.asRuntimeException());
                } else {
                  receipts.onNext(
                      EventReceipt.newBuilder().setSeq(envelope.getSeq()).setTaken(1).build());
                }
              }

              @Override
              public void onError(Throwable error) {}

              @Override
              public void onCompleted() {}
            };
          }
        });
    return received;
  }

  @Test
  void should_send_a_progress_report_again_on_a_new_stream_when_the_stream_breaks_unanswered()
      throws IOException {
    List<EventEnvelope> onA = breakingStreams(1);
    Node b = node("b");
    RpcCallback remote = offerFrom("a", b, rpc(10_000, new RecordingCallback()));

    remote.responded("{}");

    await()
        .atMost(TIMEOUT)
        .until(() -> b.metrics().progressReportsSent(EventSendOutcome.ANSWERED) == 1);
    assertThat(b.metrics().progressReportsSent(EventSendOutcome.FAILED)).isZero();
    assertThat(onA).hasSize(2);
    assertThat(onA.get(1).getProgress()).isEqualTo(onA.get(0).getProgress());
  }

  @Test
  void should_give_a_progress_report_up_when_its_second_stream_breaks_too() throws IOException {
    List<EventEnvelope> onA = breakingStreams(Integer.MAX_VALUE);
    Node b = node("b");
    RpcCallback remote = offerFrom("a", b, rpc(10_000, new RecordingCallback()));

    remote.responded("{}");

    await()
        .atMost(TIMEOUT)
        .until(() -> b.metrics().progressReportsSent(EventSendOutcome.FAILED) == 1);
    assertThat(onA).as("sent twice, not more").hasSize(2);
    assertThat(b.events().inflight("a")).isZero();
  }
}
