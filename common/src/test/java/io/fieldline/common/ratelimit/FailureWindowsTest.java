package io.fieldline.common.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FailureWindowsTest {

  private final AtomicLong now = new AtomicLong(-7_000_000_000L);
  private final FailureWindows<String> windows =
      new FailureWindows<>(2, Duration.ofSeconds(10), 100, now::get);

  @Test
  void should_lock_a_key_out_until_its_window_ends_when_it_fails_the_maximum() {
    windows.failed("a");
    now.addAndGet(Duration.ofSeconds(3).toNanos());
    assertThat(windows.lockedFor("a")).isZero();
    windows.failed("a");

    assertThat(windows.lockedFor("a")).isEqualTo(Duration.ofSeconds(7).toNanos());
    assertThat(windows.lockedFor("b")).isZero();
    now.addAndGet(Duration.ofSeconds(7).toNanos());
    assertThat(windows.lockedFor("a")).isZero();
    assertThat(windows.tracked()).isZero();
  }

  @Test
  void should_start_a_new_window_at_the_first_failure_after_the_last_one_ended() {
    windows.failed("a");
    now.addAndGet(Duration.ofSeconds(15).toNanos());
    windows.failed("a");
    now.addAndGet(Duration.ofSeconds(8).toNanos());
    windows.failed("a");

    assertThat(windows.lockedFor("a")).isEqualTo(Duration.ofSeconds(2).toNanos());
  }

  @Test
  void should_forget_a_key_when_it_is_cleared() {
    windows.failed("a");
    windows.failed("a");
    windows.clear("a");

    assertThat(windows.lockedFor("a")).isZero();
  }
}
