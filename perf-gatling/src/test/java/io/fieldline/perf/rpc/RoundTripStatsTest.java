package io.fieldline.perf.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RoundTripStatsTest {

  private static final long MS = 1_000_000L;

  @Test
  void should_count_as_lost_every_call_not_answered_200_with_its_own_echo() {
    RoundTripStats stats = new RoundTripStats();
    long t0 = 1_000_000L;

    stats.record(t0, 200, true, 5 * MS);
    stats.record(t0, 200, false, 6 * MS);
    stats.record(t0, 504, false, 10_000 * MS);
    stats.record(t0, RoundTripStats.NO_RESPONSE, false, 60_000 * MS);

    assertThat(stats.calls()).isEqualTo(4);
    assertThat(stats.answered()).isEqualTo(1);
    assertThat(stats.lost()).isEqualTo(3);
    Map<String, Object> out = stats.describe();
    assertThat(out).containsEntry("wrongEcho", 1L).containsEntry("lost", 3L);
    assertThat(out.get("statuses")).isEqualTo(Map.of("0", 1L, "200", 2L, "504", 1L));
    @SuppressWarnings("unchecked")
    Map<String, Object> roundTrip = (Map<String, Object>) out.get("roundTripMillis");
    assertThat(roundTrip).containsEntry("count", 1L);
    assertThat((double) roundTrip.get("max")).isCloseTo(5.0, within(0.01));
  }

  @Test
  void should_put_each_call_in_the_window_of_its_start_second_counted_from_the_first_call() {
    RoundTripStats stats = new RoundTripStats().window("cold", 0, 2).window("warm", 2, 4);
    long t0 = 50_000L;

    stats.record(t0, 200, true, 60 * MS);
    stats.record(t0 + 1_999, 200, true, 30 * MS);
    stats.record(t0 + 2_000, 200, true, 2 * MS);
    stats.record(t0 + 3_500, 504, false, 10 * MS);

    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> windows =
        (Map<String, Map<String, Object>>) stats.describe().get("windows");
    @SuppressWarnings("unchecked")
    Map<String, Object> cold = (Map<String, Object>) windows.get("cold").get("roundTripMillis");
    @SuppressWarnings("unchecked")
    Map<String, Object> warm = (Map<String, Object>) windows.get("warm").get("roundTripMillis");
    assertThat(cold).containsEntry("count", 2L);
    assertThat(warm).containsEntry("count", 1L);
    assertThat((double) warm.get("max")).isCloseTo(2.0, within(0.01));
    assertThat(windows.get("warm"))
        .containsEntry("lost", 1L)
        .containsEntry("answeredPerSecond", 0.5);
    assertThat(stats.meanAnsweredPerSecond(0, 2)).isEqualTo(1.0);
    assertThat(stats.firstCallMillis()).isEqualTo(t0);
    assertThat(stats.describe().get("slowPerSecond")).isEqualTo(List.of(1L));
    assertThat(stats.describe().get("maxMicrosPerSecond"))
        .isEqualTo(List.of(60_000L, 30_000L, 2_000L));
  }
}
