package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.RpcCallback;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Long polls on this node's real event path ({@link LocalDeviceEvents}). */
class LongPollsTest {

  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final LocalDeviceEvents events = new LocalDeviceEvents();
  private final List<DeviceEvent> published = new CopyOnWriteArrayList<>();
  private final DeviceId device = new DeviceId(UUID.randomUUID());
  private final List<String> reports = new CopyOnWriteArrayList<>();
  // The clock the polls count their waits with; it moves only when a test moves it.
  private final AtomicLong nanos = new AtomicLong(System.nanoTime());
  private final DeviceBudgets budgets =
      new DeviceBudgets(DeviceApiConfig.from(ConfigFactory.load()), nanos::get);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final DeviceApiMetrics metrics = new DeviceApiMetrics(meters, () -> 0);
  private final RpcReplies replies = new RpcReplies(10, timer, metrics);
  private final LongPolls polls =
      new LongPolls(events, budgets, replies, timer, metrics, nanos::get, 100);

  LongPollsTest() {
    events.subscribeAll(
        event -> {
          published.add(event);
          return false;
        });
  }

  @AfterEach
  void stopTimer() {
    timer.shutdownNow();
  }

  private RpcCallback callback(String name) {
    return new RpcCallback() {
      @Override
      public void sent() {
        reports.add(name + " sent");
      }

      @Override
      public void delivered() {
        reports.add(name + " delivered");
      }

      @Override
      public void responded(String body) {
        reports.add(name + " responded " + body);
      }

      @Override
      public void undelivered(String reason) {
        reports.add(name + " undelivered");
      }
    };
  }

  private ToDeviceRpc rpc(String method, boolean oneway) {
    return new ToDeviceRpc(
        UUID.randomUUID(),
        device,
        method,
        "{\"pin\":4}",
        oneway,
        false,
        5_000,
        System.currentTimeMillis() + 5_000,
        0,
        null);
  }

  /** A poll that arrived now. */
  private CompletionStage<HttpResponse> start(LongPoll.Kind kind, Duration timeout) {
    return polls.start(kind, device, timeout, nanos.get());
  }

  private long announcements() {
    return published.stream().filter(DeviceEvent.RpcSubscribed.class::isInstance).count();
  }

  private static HttpResponse answer(CompletionStage<HttpResponse> poll) {
    return poll.toCompletableFuture().join();
  }

  private static JsonNode body(HttpResponse response) {
    try {
      return DeviceJson.MAPPER.readTree(
          ((HttpEntity.Strict) response.entity()).getData().utf8String());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void should_answer_with_the_first_shared_update_only_when_attributes_change() {
    CompletionStage<HttpResponse> poll = start(LongPoll.Kind.ATTRIBUTES, Duration.ofSeconds(10));

    int clientTakers =
        events.deliver(
            new DeviceEvent.AttributesUpdated(
                device,
                AttributeScope.CLIENT_SCOPE,
                List.of(new AttributeKvEntry(1, KvEntry.of("fw", "v1")))));
    int sharedTakers =
        events.deliver(
            new DeviceEvent.AttributesUpdated(
                device,
                AttributeScope.SHARED_SCOPE,
                List.of(new AttributeKvEntry(1, KvEntry.of("target", 21L)))));
    int laterTakers =
        events.deliver(
            new DeviceEvent.AttributesDeleted(device, AttributeScope.SHARED_SCOPE, List.of("x")));

    assertThat(clientTakers).isZero();
    assertThat(sharedTakers).isEqualTo(1);
    assertThat(laterTakers).isZero();
    assertThat(body(answer(poll)).toString()).isEqualTo("{\"target\":21}");
    assertThat(polls.waiting()).isZero();
    assertThat(budgets.polls()).isZero();
  }

  @Test
  void should_take_one_request_and_report_it_sent_and_delivered_when_an_rpc_poll_waits() {
    CompletionStage<HttpResponse> poll = start(LongPoll.Kind.RPC, Duration.ofSeconds(10));

    int first =
        events.deliver(new DeviceEvent.RpcRequested(device, rpc("get", false), callback("first")));
    int second =
        events.deliver(new DeviceEvent.RpcRequested(device, rpc("set", true), callback("second")));

    assertThat(published).first().isInstanceOf(DeviceEvent.RpcSubscribed.class);
    assertThat(first).isEqualTo(1);
    assertThat(second).isZero();
    JsonNode request = body(answer(poll));
    assertThat(request.get("method").asText()).isEqualTo("get");
    assertThat(request.get("params").toString()).isEqualTo("{\"pin\":4}");
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> reports.equals(List.of("first sent", "first delivered")));
    assertThat(replies.reply(device, request.get("id").asInt(), "{\"t\":1}")).isTrue();
    assertThat(reports).last().isEqualTo("first responded {\"t\":1}");
  }

  @Test
  void should_answer_408_when_nothing_comes_and_503_when_the_server_stops() {
    CompletionStage<HttpResponse> quiet = start(LongPoll.Kind.ATTRIBUTES, Duration.ofMillis(50));
    CompletionStage<HttpResponse> waiting = start(LongPoll.Kind.RPC, Duration.ofSeconds(30));

    assertThat(answer(quiet).status().intValue()).isEqualTo(408);
    polls.closeAll();

    assertThat(answer(waiting).status().intValue()).isEqualTo(503);
    assertThat(answer(start(LongPoll.Kind.RPC, Duration.ofSeconds(30))).status().intValue())
        .isEqualTo(503);
    assertThat(events.deliver(new DeviceEvent.RpcRequested(device, rpc("m", true), callback("x"))))
        .isZero();
    // A poll's slot is released when its answer completes, possibly after the answer is seen.
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(budgets.polls()).isZero());
  }

  @Test
  void should_leave_a_two_way_request_to_the_rpc_service_when_it_comes_after_the_poll_timed_out() {
    CompletionStage<HttpResponse> poll = start(LongPoll.Kind.RPC, Duration.ofMillis(50));
    assertThat(answer(poll).status().intValue()).isEqualTo(408);

    int takers =
        events.deliver(new DeviceEvent.RpcRequested(device, rpc("late", false), callback("late")));

    assertThat(takers).isZero();
    assertThat(replies.waiting()).isZero();
    assertThat(reports).isEmpty();
    assertThat(polls.waiting()).isZero();
  }

  @Test
  void should_answer_408_at_once_and_take_nothing_when_the_wait_was_spent_before_the_poll_began() {
    long arrived = nanos.get();
    nanos.addAndGet(Duration.ofSeconds(2).toNanos()); // the token look-up took 2 s

    CompletionStage<HttpResponse> poll =
        polls.start(LongPoll.Kind.RPC, device, Duration.ofSeconds(1), arrived);

    assertThat(poll.toCompletableFuture()).isDone();
    assertThat(answer(poll).status().intValue()).isEqualTo(408);
    assertThat(events.deliver(new DeviceEvent.RpcRequested(device, rpc("m", false), callback("x"))))
        .isZero();
    assertThat(replies.waiting()).isZero();
    assertThat(budgets.polls()).isZero();
    assertThat(announcements()).isZero();
  }

  @Test
  void should_wait_only_what_is_left_when_part_of_the_wait_was_spent_before_the_poll_began()
      throws Exception {
    long arrived = nanos.get();
    nanos.addAndGet(Duration.ofMillis(29_900).toNanos());

    CompletionStage<HttpResponse> poll =
        polls.start(LongPoll.Kind.ATTRIBUTES, device, Duration.ofSeconds(30), arrived);

    // 100 ms were left of 30 s: answered long before the whole 30 s.
    HttpResponse answer = poll.toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(answer.status().intValue()).isEqualTo(408);
  }

  @Test
  void should_announce_an_rpc_poll_only_when_the_device_was_not_polling_or_missed_a_request() {
    // The device's first RPC poll: announced (calls waiting for it are offered again).
    assertThat(answer(start(LongPoll.Kind.RPC, Duration.ofMillis(50))).status().intValue())
        .isEqualTo(408);
    assertThat(announcements()).isEqualTo(1);

    // It polls again at once and nothing was offered meanwhile: nothing to offer again.
    assertThat(answer(start(LongPoll.Kind.RPC, Duration.ofMillis(50))).status().intValue())
        .isEqualTo(408);
    assertThat(announcements()).isEqualTo(1);

    // A request offered while none of its polls waits is not taken: the next poll announces.
    assertThat(events.deliver(new DeviceEvent.RpcRequested(device, rpc("m", false), callback("a"))))
        .isZero();
    CompletionStage<HttpResponse> third = start(LongPoll.Kind.RPC, Duration.ofSeconds(10));
    assertThat(announcements()).isEqualTo(2);
    // ... and takes the request offered again.
    assertThat(events.deliver(new DeviceEvent.RpcRequested(device, rpc("m", false), callback("a"))))
        .isEqualTo(1);
    assertThat(answer(third).status().intValue()).isEqualTo(200);

    // After a quiet while without polls, the next poll announces again.
    nanos.addAndGet(LongPolls.ANNOUNCE_INTERVAL.toNanos());
    polls.sweep();
    assertThat(answer(start(LongPoll.Kind.RPC, Duration.ofMillis(50))).status().intValue())
        .isEqualTo(408);
    assertThat(announcements()).isEqualTo(3);
    assertThat(meters.get(DeviceApiMetrics.RPC_ANNOUNCED).counter().count()).isEqualTo(3);
  }

  @Test
  void should_announce_again_when_a_polling_device_could_not_take_a_request() {
    RpcReplies full = new RpcReplies(1, timer, metrics);
    LongPolls limited = new LongPolls(events, budgets, full, timer, metrics, nanos::get, 100);
    CompletionStage<HttpResponse> first =
        limited.start(LongPoll.Kind.RPC, device, Duration.ofSeconds(10), nanos.get());
    assertThat(events.deliver(new DeviceEvent.RpcRequested(device, rpc("a", false), callback("a"))))
        .isEqualTo(1);
    assertThat(answer(first).status().intValue()).isEqualTo(200);
    CompletionStage<HttpResponse> second =
        limited.start(LongPoll.Kind.RPC, device, Duration.ofMillis(200), nanos.get());

    // The device has as many requests awaiting its reply as it may: the poll cannot take this one.
    int takers =
        events.deliver(new DeviceEvent.RpcRequested(device, rpc("b", false), callback("b")));

    assertThat(takers).isZero();
    assertThat(answer(second).status().intValue()).isEqualTo(408);
    long before = announcements();
    limited.start(LongPoll.Kind.RPC, device, Duration.ofMillis(50), nanos.get());
    assertThat(announcements()).isEqualTo(before + 1);
  }

  @Test
  void should_keep_at_most_the_bound_of_quiet_devices_when_many_devices_poll() {
    LongPolls bounded = new LongPolls(events, budgets, replies, timer, metrics, nanos::get, 2);

    for (int i = 0; i < 5; i++) {
      DeviceId other = new DeviceId(UUID.randomUUID());
      answer(bounded.start(LongPoll.Kind.RPC, other, Duration.ofMillis(10), nanos.get()));
    }

    await().atMost(Duration.ofSeconds(5)).until(() -> bounded.watched() <= 2);
    assertThat(events.devicesListened()).isLessThanOrEqualTo(2);
  }
}
