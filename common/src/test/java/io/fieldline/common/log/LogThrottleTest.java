package io.fieldline.common.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogThrottleTest {

  // Negative on purpose: System.nanoTime() has no fixed origin.
  private final AtomicLong now = new AtomicLong(-5_000_000_000_000L);

  @Test
  void should_take_one_line_per_10_s_and_count_those_left_out_when_lines_repeat() {
    LogThrottle throttle = new LogThrottle(now::get);
    long suppressedBefore = LogThrottle.suppressedInAll();

    assertThat(throttle.admit()).isZero();
    assertThat(throttle.admit()).isEqualTo(-1);
    assertThat(throttle.admit()).isEqualTo(-1);
    now.addAndGet(Duration.ofSeconds(10).toNanos() - 1);
    assertThat(throttle.admit()).isEqualTo(-1);
    now.incrementAndGet();

    assertThat(throttle.admit()).isEqualTo(3);
    assertThat(LogThrottle.suppressedInAll() - suppressedBefore).isGreaterThanOrEqualTo(3);
  }

  @Test
  void should_keep_budgets_apart_when_two_kinds_of_line_repeat() {
    LogThrottle one = new LogThrottle(now::get);
    LogThrottle two = new LogThrottle(now::get);

    assertThat(one.admit()).isZero();
    assertThat(two.admit()).isZero();
    assertThat(one.admit()).isEqualTo(-1);
  }
}
