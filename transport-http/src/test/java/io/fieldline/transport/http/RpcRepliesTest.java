package io.fieldline.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.rpc.RpcCallback;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RpcRepliesTest {

  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final RpcReplies replies =
      new RpcReplies(2, timer, new DeviceApiMetrics(meters, () -> 0));
  private final DeviceId device = new DeviceId(UUID.randomUUID());
  private final List<String> heard = new CopyOnWriteArrayList<>();

  private final RpcCallback callback =
      new RpcCallback() {
        @Override
        public void sent() {
          heard.add("sent");
        }

        @Override
        public void delivered() {
          heard.add("delivered");
        }

        @Override
        public void responded(String body) {
          heard.add("responded " + body);
        }

        @Override
        public void undelivered(String reason) {
          heard.add("undelivered");
        }
      };

  @AfterEach
  void stopTimer() {
    timer.shutdownNow();
  }

  @Test
  void should_hand_the_reply_to_the_callback_once_when_the_device_replies() {
    int id = replies.nextId();
    assertThat(replies.track(device, id, callback, 10_000)).isTrue();

    assertThat(replies.reply(device, id, "{\"ok\":true}")).isTrue();
    assertThat(replies.reply(device, id, "{\"ok\":false}")).isFalse();
    assertThat(replies.reply(new DeviceId(UUID.randomUUID()), id, "{}")).isFalse();

    assertThat(heard).containsExactly("responded {\"ok\":true}");
    assertThat(replies.waiting()).isZero();
  }

  @Test
  void should_take_no_more_when_the_device_has_max_pending_rpc_waiting() {
    assertThat(replies.track(device, replies.nextId(), callback, 10_000)).isTrue();
    assertThat(replies.track(device, replies.nextId(), callback, 10_000)).isTrue();

    assertThat(replies.track(device, replies.nextId(), callback, 10_000)).isFalse();
    assertThat(replies.track(new DeviceId(UUID.randomUUID()), replies.nextId(), callback, 10_000))
        .isTrue();
  }

  @Test
  void should_forget_the_request_when_no_reply_comes_within_its_timeout() {
    int id = replies.nextId();
    replies.track(device, id, callback, 50);

    await().atMost(Duration.ofSeconds(5)).until(() -> replies.waiting() == 0);

    assertThat(replies.reply(device, id, "{}")).isFalse();
    assertThat(heard).isEmpty();
    assertThat(meters.get(DeviceApiMetrics.RPC).tag("outcome", "expired").counter().count())
        .isEqualTo(1);
  }
}
