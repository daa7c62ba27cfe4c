package io.fieldline.server.devhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.LocalDeviceEvents;
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
  private final DeviceBudgets budgets =
      new DeviceBudgets(
          DeviceApiConfig.from(ConfigFactory.defaultReference().resolve()), System::nanoTime);
  private final DeviceApiMetrics metrics = new DeviceApiMetrics(new SimpleMeterRegistry(), () -> 0);
  private final RpcReplies replies = new RpcReplies(10, timer, metrics);
  private final LongPolls polls = new LongPolls(events, budgets, replies, timer, metrics);

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
    CompletionStage<HttpResponse> poll =
        polls.start(LongPoll.Kind.ATTRIBUTES, device, Duration.ofSeconds(10));

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
    CompletionStage<HttpResponse> poll =
        polls.start(LongPoll.Kind.RPC, device, Duration.ofSeconds(10));

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
    CompletionStage<HttpResponse> quiet =
        polls.start(LongPoll.Kind.ATTRIBUTES, device, Duration.ofMillis(50));
    CompletionStage<HttpResponse> waiting =
        polls.start(LongPoll.Kind.RPC, device, Duration.ofSeconds(30));

    assertThat(answer(quiet).status().intValue()).isEqualTo(408);
    polls.closeAll();

    assertThat(answer(waiting).status().intValue()).isEqualTo(503);
    assertThat(
            answer(polls.start(LongPoll.Kind.RPC, device, Duration.ofSeconds(30)))
                .status()
                .intValue())
        .isEqualTo(503);
    assertThat(events.deliver(new DeviceEvent.RpcRequested(device, rpc("m", true), callback("x"))))
        .isZero();
    assertThat(budgets.polls()).isZero();
  }
}
