package io.fieldline.perf.live;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Made-up runs on a clock starting at {@link #ORIGIN}: one watched device per subscription,
 * messages a second apart, updates shaped as the server sends them.
 */
class LiveUpdateStatsTest {

  private static final long ORIGIN = 1_700_000_000_000L;

  private final LiveUpdateStats stats = new LiveUpdateStats().watch(1, "device-a", "token-a");

  private static String update(int subscription, long... ts) {
    StringBuilder points = new StringBuilder();
    for (int i = 0; i < ts.length; i++) {
      points.append(i == 0 ? "" : ",").append("[").append(ts[i]).append(",\"21.5\"]");
    }
    return "{\"subscriptionId\":"
        + subscription
        + ",\"errorCode\":0,\"errorMsg\":null,\"data\":{\"temperature\":["
        + points
        + "],\"humidity\":["
        + points
        + "]},\"latestValues\":{}}";
  }

  /** Message {@code ts} of token-a, published and acknowledged {@code ackAfter} ms later. */
  private void published(long ts, long ackAfter) {
    stats.sent("token-a", ts);
    stats.acked("token-a", ts, ts + ackAfter);
  }

  @Test
  void should_time_each_live_update_from_its_publish_and_its_puback_when_it_arrives() {
    published(ORIGIN, 3);
    stats.subscribed(1, ORIGIN + 500);
    stats.received(update(1, ORIGIN), ORIGIN + 520); // the current value: not timed
    published(ORIGIN + 1_000, 4);
    stats.received(update(1, ORIGIN + 1_000), ORIGIN + 1_010);
    published(ORIGIN + 2_000, 2);
    stats.received(update(1, ORIGIN + 2_000), ORIGIN + 2_030);

    Map<String, Object> all = stats.describe(ORIGIN, Map.of());

    assertThat(all).containsEntry("subscriptionsStarted", 1).containsEntry("messagesSent", 3L);
    assertThat(all).containsEntry("expected", 2L).containsEntry("lost", 0L);
    assertThat(all).containsEntry("received", 2L).containsEntry("beforeAck", 0L);
    assertThat(percentiles(all, "updateLatencyMillis"))
        .containsEntry("count", 2L)
        .containsEntry("p50", 10L)
        .containsEntry("max", 30L);
    assertThat(percentiles(all, "afterAckMillis"))
        .containsEntry("p50", 6L)
        .containsEntry("max", 28L);
    assertThat(percentiles(all, "firstUpdateMillis")).containsEntry("max", 20L);
  }

  @Test
  void should_count_an_acknowledged_message_as_lost_when_no_update_carries_it() {
    published(ORIGIN, 3);
    stats.received(update(1, ORIGIN), ORIGIN + 10);
    published(ORIGIN + 1_000, 3);
    published(ORIGIN + 2_000, 3);
    stats.received(update(1, ORIGIN + 2_000), ORIGIN + 2_005);
    stats.sent("token-a", ORIGIN + 3_000); // never acknowledged: not expected

    Map<String, Object> all = stats.describe(ORIGIN, Map.of());

    assertThat(all)
        .containsEntry("expected", 2L)
        .containsEntry("receivedExpected", 1L)
        .containsEntry("lost", 1L);
    assertThat(list(all.get("lostPerSecond"))).containsExactly(0L, 1L, 0L, 0L);
    assertThat(map(map(all.get("lostBySubscription")).get(1)))
        .containsEntry("device", "device-a")
        .containsEntry("lost", 1L)
        .containsEntry("firstLostMillis", 1_000L)
        .containsEntry("firstUpdateMillis", 10L);
    assertThat(list(all.get("receivedPerSecond"))).containsExactly(0L, 0L, 1L, 0L);
  }

  @Test
  void should_split_figures_by_the_second_of_the_message_when_windows_are_given() {
    stats.received(update(1), ORIGIN); // first update, nothing stored yet
    published(ORIGIN + 500, 1);
    stats.received(update(1, ORIGIN + 500), ORIGIN + 800); // slow, cold
    published(ORIGIN + 1_500, 1);
    stats.received(update(1, ORIGIN + 1_500), ORIGIN + 1_502);
    Map<String, int[]> windows = new LinkedHashMap<>();
    windows.put("cold", new int[] {0, 1});
    windows.put("warm", new int[] {1, 2});

    Map<String, Object> all = stats.describe(ORIGIN, windows);

    Map<String, Object> named = map(all.get("windows"));
    Map<String, Object> cold = map(named.get("cold"));
    Map<String, Object> warm = map(named.get("warm"));
    assertThat(cold.get("seconds")).isEqualTo(List.of(0, 1));
    assertThat(map(cold.get("updateLatencyMillis"))).containsEntry("max", 300L);
    assertThat(map(warm.get("updateLatencyMillis")))
        .containsEntry("count", 1L)
        .containsEntry("max", 2L);
    assertThat(all.get("slowPerSecond")).isEqualTo(List.of(1L, 0L));
    assertThat(all.get("maxLatencyMillisPerSecond")).isEqualTo(List.of(300L, 2L));
  }

  @Test
  void should_count_an_update_ahead_of_its_puback_as_zero_after_it() {
    stats.received(update(1), ORIGIN);
    published(ORIGIN + 100, 9);
    stats.received(update(1, ORIGIN + 100), ORIGIN + 104);

    Map<String, Object> all = stats.describe(ORIGIN, Map.of());

    assertThat(all).containsEntry("beforeAck", 1L);
    assertThat(percentiles(all, "afterAckMillis")).containsEntry("max", 0L);
    assertThat(percentiles(all, "updateLatencyMillis")).containsEntry("max", 4L);
  }

  @Test
  void should_count_errors_strangers_duplicates_and_unknown_points_apart() {
    stats.received(
        "{\"subscriptionId\":1,\"errorCode\":2,\"errorMsg\":\"Too many"
            + " subscriptions\",\"data\":null}",
        ORIGIN);
    stats.received(update(7, ORIGIN), ORIGIN);
    stats.received("not json", ORIGIN);
    stats.received(update(1), ORIGIN);
    published(ORIGIN + 100, 1);
    stats.received(update(1, ORIGIN + 100), ORIGIN + 102);
    stats.received(update(1, ORIGIN + 100), ORIGIN + 105);
    stats.received(update(1, ORIGIN + 150), ORIGIN + 155);

    Map<String, Object> all = stats.describe(ORIGIN, Map.of());

    assertThat(all)
        .containsEntry("errors", 1L)
        .containsEntry("unknownSubscription", 1L)
        .containsEntry("malformed", 1L)
        .containsEntry("duplicates", 1L)
        .containsEntry("unmatched", 1L)
        .containsEntry("received", 1L);
    assertThat(list(all.get("errorSamples"))).hasSize(1);
    assertThat(percentiles(all, "updateLatencyMillis")).containsEntry("max", 2L);
  }

  @Test
  void should_expect_every_message_after_subscribing_when_the_first_update_never_came() {
    published(ORIGIN, 1);
    stats.subscribed(1, ORIGIN + 10);
    published(ORIGIN + 1_000, 1);
    published(ORIGIN + 2_000, 1);

    Map<String, Object> all = stats.describe(ORIGIN, Map.of());

    assertThat(all)
        .containsEntry("subscriptionsStarted", 0)
        .containsEntry("expected", 2L)
        .containsEntry("lost", 2L);
  }

  @Test
  void should_refuse_a_device_watched_twice() {
    assertThatThrownBy(() -> stats.watch(2, "device-a", "token-a"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static Map<String, Object> percentiles(Map<String, Object> all, String name) {
    return map(all.get(name));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object value) {
    return (List<Object>) value;
  }
}
