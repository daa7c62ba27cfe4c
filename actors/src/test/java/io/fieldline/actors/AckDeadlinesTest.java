package io.fieldline.actors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.kv.Ack;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class AckDeadlinesTest {

  private static final Duration TIMEOUT = Duration.ofMillis(300);

  private final AckDeadlines deadlines =
      new AckDeadlines(TIMEOUT, new ActorMetrics(new SimpleMeterRegistry()));

  @AfterEach
  void close() {
    deadlines.close();
  }

  @Test
  void should_reject_as_timeout_after_the_timeout_and_leave_completed_ones_alone()
      throws Exception {
    CompletableFuture<Ack> pending = new CompletableFuture<>();
    CompletableFuture<Ack> answered = new CompletableFuture<>();
    long armed = System.nanoTime();
    assertThat(deadlines.arm(pending)).isTrue();
    assertThat(deadlines.arm(answered)).isTrue();
    answered.complete(Ack.stored());

    Ack outcome = pending.get(TIMEOUT.multipliedBy(20).toMillis(), TimeUnit.MILLISECONDS);

    assertThat(Duration.ofNanos(System.nanoTime() - armed)).isGreaterThanOrEqualTo(TIMEOUT);
    assertThat(outcome).isEqualTo(Ack.rejected(Ack.Reason.WRITE_FAILED, "timeout"));
    assertThat(answered.join()).isEqualTo(Ack.stored());
  }

  @Test
  void should_time_out_every_one_of_many_acks_armed_from_several_threads() throws Exception {
    List<CompletableFuture<Ack>> acks = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      List<CompletableFuture<Ack>> mine = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        mine.add(new CompletableFuture<>());
      }
      acks.addAll(mine);
      Thread thread = new Thread(() -> mine.forEach(deadlines::arm));
      thread.start();
      threads.add(thread);
    }
    for (Thread thread : threads) {
      thread.join();
    }

    await()
        .atMost(TIMEOUT.multipliedBy(10))
        .untilAsserted(() -> assertThat(acks).allMatch(CompletableFuture::isDone));
    assertThat(acks)
        .extracting(CompletableFuture::join)
        .containsOnly(Ack.rejected(Ack.Reason.WRITE_FAILED, "timeout"));
  }

  @Test
  void should_reject_pending_as_unavailable_on_close_and_refuse_to_arm_afterwards() {
    CompletableFuture<Ack> pending = new CompletableFuture<>();
    deadlines.arm(pending);

    deadlines.close();

    assertThat(pending).isCompletedWithValue(Ack.rejected(Ack.Reason.UNAVAILABLE, "shut down"));
    assertThat(deadlines.arm(new CompletableFuture<>())).isFalse();
  }

  @Test
  void should_tick_at_a_hundredth_of_the_timeout_within_10_to_200_ms() {
    assertThat(AckDeadlines.resolution(Duration.ofSeconds(15))).isEqualTo(Duration.ofMillis(150));
    assertThat(AckDeadlines.resolution(Duration.ofMillis(200))).isEqualTo(Duration.ofMillis(10));
    assertThat(AckDeadlines.resolution(Duration.ofMinutes(5))).isEqualTo(Duration.ofMillis(200));
  }
}
