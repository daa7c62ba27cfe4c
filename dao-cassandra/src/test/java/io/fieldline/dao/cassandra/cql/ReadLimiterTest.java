package io.fieldline.dao.cassandra.cql;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.StoreException;
import io.fieldline.common.query.ReadRefusedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ReadLimiterTest {

  /** Reads whose completion the test controls, in the order they started. */
  private final List<CompletableFuture<String>> started = new ArrayList<>();

  /** Wait timers the test fires by hand. */
  private final List<Runnable> timers = new ArrayList<>();

  private final AtomicBoolean writesBusy = new AtomicBoolean();

  private ReadLimiter limiter(int inflight, int queued, int perUser) {
    return new ReadLimiter(
        inflight,
        queued,
        perUser,
        Duration.ofSeconds(5),
        writesBusy::get,
        nanos -> (Executor) timers::add);
  }

  private CompletionStage<String> submit(ReadLimiter limiter, String user) {
    return limiter.submit(
        user,
        () -> {
          CompletableFuture<String> read = new CompletableFuture<>();
          started.add(read);
          return read;
        });
  }

  private static ReadRefusedException refusal(CompletionStage<String> stage) {
    CompletableFuture<String> future = stage.toCompletableFuture();
    assertThat(future).isCompletedExceptionally();
    Throwable cause = future.handle((value, error) -> error).join();
    assertThat(cause).isInstanceOf(ReadRefusedException.class);
    ReadRefusedException refused = (ReadRefusedException) cause;
    assertThat(refused.kind()).isEqualTo(StoreException.Kind.OVERLOADED);
    return refused;
  }

  @Test
  void should_run_at_most_max_inflight_and_queue_the_rest_when_many_users_read() {
    ReadLimiter limiter = limiter(2, 10, 4);

    for (int i = 0; i < 5; i++) {
      submit(limiter, "user" + i);
    }

    assertThat(started).hasSize(2);
    assertThat(limiter.inflight()).isEqualTo(2);
    assertThat(limiter.queued()).isEqualTo(3);
  }

  @Test
  void should_start_waiting_reads_in_fifo_order_when_slots_free_up() {
    ReadLimiter limiter = limiter(1, 10, 4);
    CompletionStage<String> first = submit(limiter, "a");
    CompletionStage<String> second = submit(limiter, "b");

    started.get(0).complete("one");

    assertThat(first.toCompletableFuture().join()).isEqualTo("one");
    assertThat(started).hasSize(2);
    started.get(1).complete("two");
    assertThat(second.toCompletableFuture().join()).isEqualTo("two");
    assertThat(limiter.inflight()).isZero();
    assertThat(limiter.queued()).isZero();
  }

  @Test
  void should_refuse_with_node_scope_when_the_queue_is_full() {
    ReadLimiter limiter = limiter(1, 1, 4);
    submit(limiter, "a");
    submit(limiter, "b");

    ReadRefusedException refused = refusal(submit(limiter, "c"));

    assertThat(refused.scope()).isEqualTo(ReadRefusedException.Scope.NODE);
    assertThat(refused.getMessage()).contains("overloaded");
    assertThat(refused.retryAfterSeconds()).isPositive();
    assertThat(limiter.refused(ReadLimiter.Refusal.QUEUE_FULL)).isEqualTo(1);
    assertThat(started).hasSize(1);
  }

  @Test
  void should_refuse_with_user_scope_when_one_user_has_max_per_user_reads() {
    ReadLimiter limiter = limiter(10, 10, 2);
    submit(limiter, "greedy");
    submit(limiter, "greedy");

    ReadRefusedException refused = refusal(submit(limiter, "greedy"));
    CompletionStage<String> other = submit(limiter, "other");

    assertThat(refused.scope()).isEqualTo(ReadRefusedException.Scope.USER);
    assertThat(limiter.refused(ReadLimiter.Refusal.USER_LIMIT)).isEqualTo(1);
    assertThat(other.toCompletableFuture()).isNotDone();
    assertThat(started).hasSize(3);
  }

  @Test
  void should_give_a_user_its_share_back_when_a_read_completes_or_fails() {
    ReadLimiter limiter = limiter(10, 10, 1);
    submit(limiter, "u");
    started.get(0).completeExceptionally(new IllegalStateException("boom"));

    CompletionStage<String> again = submit(limiter, "u");

    assertThat(again.toCompletableFuture()).isNotDone();
    assertThat(started).hasSize(2);
  }

  @Test
  void should_not_bound_reads_without_a_user_per_user() {
    ReadLimiter limiter = limiter(10, 10, 1);

    for (int i = 0; i < 5; i++) {
      submit(limiter, "");
    }

    assertThat(started).hasSize(5);
  }

  @Test
  void should_refuse_a_waiting_read_when_it_waited_max_wait() {
    ReadLimiter limiter = limiter(1, 10, 4);
    submit(limiter, "a");
    CompletionStage<String> waiting = submit(limiter, "b");

    timers.forEach(Runnable::run);

    assertThat(refusal(waiting).scope()).isEqualTo(ReadRefusedException.Scope.NODE);
    assertThat(limiter.queued()).isZero();
    assertThat(limiter.refused(ReadLimiter.Refusal.WAIT_TIMEOUT)).isEqualTo(1);
    // Its user's share is back: the same user may wait again.
    started.get(0).complete("done");
    submit(limiter, "b");
    assertThat(started).hasSize(2);
  }

  @Test
  void should_hold_reads_back_while_writes_are_saturated_and_start_them_on_drain() {
    ReadLimiter limiter = limiter(4, 10, 4);
    writesBusy.set(true);

    CompletionStage<String> read = submit(limiter, "a");

    assertThat(started).isEmpty();
    assertThat(limiter.queued()).isEqualTo(1);
    limiter.drain();
    assertThat(started).isEmpty();

    writesBusy.set(false);
    limiter.drain();

    assertThat(started).hasSize(1);
    started.get(0).complete("late");
    assertThat(read.toCompletableFuture().join()).isEqualTo("late");
  }

  @Test
  void should_release_the_slot_when_the_read_throws() {
    ReadLimiter limiter = limiter(1, 10, 4);

    CompletionStage<String> thrown =
        limiter.submit(
            "a",
            () -> {
              throw new IllegalStateException("no statement");
            });
    submit(limiter, "a");

    assertThat(thrown.toCompletableFuture()).isCompletedExceptionally();
    assertThat(started).hasSize(1);
    assertThat(limiter.inflight()).isEqualTo(1);
  }
}
