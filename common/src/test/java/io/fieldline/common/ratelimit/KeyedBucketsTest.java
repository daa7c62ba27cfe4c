package io.fieldline.common.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class KeyedBucketsTest {

  // Negative on purpose: System.nanoTime() has no fixed origin.
  private final AtomicLong now = new AtomicLong(-3_000_000_000_000_000_000L);

  @Test
  void should_refuse_a_key_until_it_regains_a_token_when_its_burst_is_spent() {
    KeyedBuckets<String> buckets =
        new KeyedBuckets<>(new Rate(2, Duration.ofSeconds(1)), 100, now::get);

    assertThat(buckets.tryTake("a")).isTrue();
    assertThat(buckets.tryTake("a")).isTrue();
    assertThat(buckets.tryTake("a")).isFalse();
    assertThat(buckets.tryTake("b")).isTrue();
    assertThat(buckets.nanosUntilToken("a")).isEqualTo(Duration.ofSeconds(1).toNanos());
    now.addAndGet(Duration.ofMillis(250).toNanos());
    assertThat(buckets.nanosUntilToken("a")).isEqualTo(Duration.ofMillis(750).toNanos());
    now.addAndGet(Duration.ofMillis(750).toNanos());
    assertThat(buckets.tryTake("a")).isTrue();
  }

  @Test
  void should_count_beyond_the_burst_when_tokens_are_taken_regardless() {
    KeyedBuckets<String> buckets =
        new KeyedBuckets<>(new Rate(1, Duration.ofSeconds(1)), 100, now::get);

    buckets.take("a");
    buckets.take("a");

    assertThat(buckets.nanosUntilToken("a")).isEqualTo(Duration.ofSeconds(2).toNanos());
  }

  @Test
  void should_forget_a_key_when_its_bucket_refilled_and_hold_at_most_max_keys() {
    KeyedBuckets<Integer> buckets =
        new KeyedBuckets<>(new Rate(3, Duration.ofSeconds(1)), 10, now::get);
    for (int i = 0; i < 100; i++) {
      buckets.tryTake(i);
    }
    assertThat(buckets.tracked()).isEqualTo(10);

    now.addAndGet(Duration.ofMillis(999).toNanos());
    assertThat(buckets.tracked()).isEqualTo(10);
    now.addAndGet(Duration.ofMillis(1).toNanos());
    assertThat(buckets.tracked()).isZero();
  }
}
