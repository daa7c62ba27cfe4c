package io.fieldline.server.rest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LoginThrottleTest {

  private final AtomicLong now = new AtomicLong();
  private final LoginThrottle throttle =
      new LoginThrottle(
          new RestConfig(
              65536,
              3,
              5,
              Duration.ofSeconds(10),
              100,
              List.of(),
              Duration.ZERO,
              new RestConfig.QueryLimits(100, 100_000, 700, Duration.ofDays(366))),
          now::get);

  @Test
  void should_lock_a_name_until_the_window_ends_when_it_fails_the_maximum() {
    for (int i = 0; i < 3; i++) {
      assertThat(throttle.retryAfter("admin", "10.0.0.1")).isEmpty();
      throttle.failed("admin", "10.0.0." + i);
    }
    now.addAndGet(Duration.ofSeconds(4).toNanos());
    assertThat(throttle.retryAfter("admin", "10.0.0.9")).hasValue(Duration.ofSeconds(6));
    now.addAndGet(Duration.ofSeconds(6).toNanos());
    assertThat(throttle.retryAfter("admin", "10.0.0.9")).isEmpty();
  }

  @Test
  void should_lock_every_name_from_an_address_when_the_address_fails_the_maximum() {
    for (int i = 0; i < 5; i++) {
      throttle.failed("name-" + i, "10.0.0.1");
    }
    assertThat(throttle.retryAfter("someone-else", "10.0.0.1")).isPresent();
    assertThat(throttle.retryAfter("someone-else", "10.0.0.2")).isEmpty();
  }

  @Test
  void should_clear_the_name_when_a_login_succeeds() {
    throttle.failed("admin", "10.0.0.1");
    throttle.failed("admin", "10.0.0.2");
    throttle.succeeded("admin");
    throttle.failed("admin", "10.0.0.3");
    throttle.failed("admin", "10.0.0.4");
    assertThat(throttle.retryAfter("admin", "10.0.0.5")).isEmpty();
  }

  @Test
  void should_remember_at_most_max_tracked_names_and_addresses_when_flooded() {
    for (int i = 0; i < 10_000; i++) {
      throttle.failed("name-" + i + "x".repeat(1000), "address-" + i);
    }
    assertThat(throttle.tracked()).isEqualTo(200);
  }
}
