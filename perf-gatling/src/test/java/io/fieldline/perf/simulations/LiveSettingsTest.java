package io.fieldline.perf.simulations;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LiveSettingsTest {

  private static LiveSettings settings(int subscriptions, int sessions) {
    return new LiveSettings(
        new RestAccess(URI.create("http://127.0.0.1:8080"), "admin", "secret"),
        subscriptions,
        sessions,
        Duration.ofSeconds(5),
        Duration.ofSeconds(30));
  }

  @Test
  void should_deal_every_subscription_to_one_session_when_they_do_not_divide_evenly() {
    LiveSettings live = settings(23, 5);

    List<Integer> all = new ArrayList<>();
    for (int session = 0; session < 5; session++) {
      all.addAll(live.subscriptionIds(session));
    }

    assertThat(live.subscriptionIds(0)).containsExactly(1, 2, 3, 4, 5);
    assertThat(live.subscriptionIds(4)).containsExactly(20, 21, 22, 23);
    assertThat(all).hasSize(23).doesNotHaveDuplicates();
  }

  @Test
  void should_watch_distinct_devices_spread_over_the_fleet() {
    LiveSettings live = settings(100, 10);

    Set<Integer> devices = new HashSet<>();
    for (int id = 1; id <= 100; id++) {
      devices.add(live.deviceIndex(id, 1000));
    }

    assertThat(devices).hasSize(100).contains(0, 10, 990).allMatch(i -> i < 1000);
    assertThat(live.deviceIndex(100, 100)).isEqualTo(99);
  }

  @Test
  void should_describe_the_run_without_the_password() {
    assertThat(settings(100, 10).describe().toString())
        .contains("subscriptions=100", "wsSessions=10")
        .doesNotContain("secret");
  }
}
