package io.fieldline.dao.cassandra.cql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.StoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class WriteLimiterTest {

  /** Requests whose completion the test controls. */
  private final List<CompletableFuture<String>> started = new ArrayList<>();

  private CompletionStage<String> submit(WriteLimiter limiter) {
    return limiter.submit(
        () -> {
          CompletableFuture<String> request = new CompletableFuture<>();
          started.add(request);
          return request;
        });
  }

  @Test
  void should_run_at_most_max_inflight_when_more_are_submitted() {
    WriteLimiter limiter = new WriteLimiter(2, 10);

    for (int i = 0; i < 5; i++) {
      submit(limiter);
    }

    assertThat(started).hasSize(2);
    assertThat(limiter.inflight()).isEqualTo(2);
    assertThat(limiter.queued()).isEqualTo(3);
  }

  @Test
  void should_start_queued_requests_in_fifo_order_when_slots_free_up() {
    WriteLimiter limiter = new WriteLimiter(1, 10);
    List<String> order = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 3; i++) {
      String name = "r" + i;
      limiter.submit(
          () -> {
            order.add(name);
            CompletableFuture<String> request = new CompletableFuture<>();
            started.add(request);
            return request;
          });
    }

    started.get(0).complete("done");
    started.get(1).complete("done");

    assertThat(order).containsExactly("r0", "r1", "r2");
    assertThat(limiter.inflight()).isEqualTo(1);
    assertThat(limiter.queued()).isZero();
  }

  @Test
  void should_fail_fast_with_overloaded_when_the_queue_is_full() {
    WriteLimiter limiter = new WriteLimiter(1, 2);
    submit(limiter);
    submit(limiter);
    submit(limiter);

    CompletableFuture<String> rejected = submit(limiter).toCompletableFuture();

    assertThat(rejected).isCompletedExceptionally();
    assertThatThrownBy(rejected::get)
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(
            StoreException.class,
            e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.OVERLOADED));
    assertThat(limiter.queued()).isEqualTo(2);
    assertThat(started).hasSize(1);
  }

  @Test
  void should_pass_results_and_failures_through_when_requests_complete() throws Exception {
    WriteLimiter limiter = new WriteLimiter(4, 0);
    CompletableFuture<String> ok = submit(limiter).toCompletableFuture();
    CompletableFuture<String> bad = submit(limiter).toCompletableFuture();
    CompletableFuture<String> thrown =
        limiter
            .<String>submit(
                () -> {
                  throw new IllegalStateException("boom");
                })
            .toCompletableFuture();

    started.get(0).complete("value");
    started.get(1).completeExceptionally(new IllegalArgumentException("nope"));

    assertThat(ok.get()).isEqualTo("value");
    assertThatThrownBy(bad::get).cause().isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(thrown::get).cause().hasMessage("boom");
    assertThat(limiter.inflight()).isZero();
  }

  @Test
  void should_signal_overload_and_relief_when_crossing_the_watermarks() {
    // high = 4 + 8/2 = 8, low = 4/2 = 2
    WriteLimiter limiter = new WriteLimiter(4, 8);
    List<Boolean> transitions = new CopyOnWriteArrayList<>();
    limiter.pressure().subscribe(transitions::add);

    for (int i = 0; i < 7; i++) {
      submit(limiter);
    }
    assertThat(transitions).isEmpty();
    submit(limiter);
    assertThat(transitions).containsExactly(true);
    assertThat(limiter.pressure().isOverloaded()).isTrue();

    for (int i = 0; i < 5; i++) {
      started.get(i).complete("ok");
    }
    assertThat(limiter.pressure().level()).isEqualTo(3);
    assertThat(transitions).containsExactly(true);
    started.get(5).complete("ok");

    assertThat(transitions).containsExactly(true, false);
    assertThat(limiter.pressure().isOverloaded()).isFalse();
  }

  @Test
  void should_not_recurse_when_requests_complete_synchronously() {
    WriteLimiter limiter = new WriteLimiter(1, 100_000);
    CompletableFuture<String> gate = new CompletableFuture<>();
    limiter.submit(() -> gate);
    List<CompletableFuture<String>> results = new ArrayList<>();
    for (int i = 0; i < 50_000; i++) {
      results.add(
          limiter.submit(() -> CompletableFuture.completedFuture("sync")).toCompletableFuture());
    }

    gate.complete("open");

    assertThat(results).allSatisfy(r -> assertThat(r).isCompletedWithValue("sync"));
    assertThat(limiter.inflight()).isZero();
    assertThat(limiter.queued()).isZero();
  }

  @Test
  void should_complete_when_idle_only_after_everything_finished() {
    WriteLimiter limiter = new WriteLimiter(1, 5);
    submit(limiter);
    submit(limiter);
    CompletableFuture<Void> idle = limiter.whenIdle().toCompletableFuture();

    started.get(0).complete("a");
    assertThat(idle).isNotDone();
    started.get(1).complete("b");

    assertThat(idle).isCompleted();
    assertThat(limiter.whenIdle().toCompletableFuture()).isCompleted();
  }
}
