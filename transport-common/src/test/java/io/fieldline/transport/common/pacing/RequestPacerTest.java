package io.fieldline.transport.common.pacing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RequestPacerTest {

  private static final long START = 1_000_000_000_000L;
  private static final long SECOND = 1_000_000_000L;

  @Test
  void should_let_the_burst_through_and_wait_one_interval_after_its_last_request() {
    RequestPacer pacer = new RequestPacer(10, 3, START);

    assertThat(pacer.delayAfter(START)).isZero();
    assertThat(pacer.delayAfter(START)).isZero();
    assertThat(pacer.delayAfter(START)).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void should_wait_one_more_interval_per_request_beyond_the_burst() {
    RequestPacer pacer = new RequestPacer(10, 2, START);
    pacer.delayAfter(START);

    assertThat(pacer.delayAfter(START)).isEqualTo(Duration.ofMillis(100));
    assertThat(pacer.delayAfter(START)).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void should_not_wait_when_requests_keep_to_the_rate() {
    RequestPacer pacer = new RequestPacer(10, 2, START);

    for (int i = 0; i < 100; i++) {
      assertThat(pacer.delayAfter(START + i * SECOND / 10)).isZero();
    }
  }

  @Test
  void should_give_the_burst_back_when_the_client_was_quiet() {
    RequestPacer pacer = new RequestPacer(10, 2, START);
    pacer.delayAfter(START);
    assertThat(pacer.delayAfter(START)).isPositive();

    long later = START + 10 * SECOND;
    assertThat(pacer.delayAfter(later)).isZero();
    assertThat(pacer.delayAfter(later)).isPositive();
  }

  @Test
  void should_never_wait_when_the_rate_is_zero() {
    RequestPacer pacer = new RequestPacer(0, 1, START);

    for (int i = 0; i < 1000; i++) {
      assertThat(pacer.delayAfter(START)).isZero();
    }
  }
}
