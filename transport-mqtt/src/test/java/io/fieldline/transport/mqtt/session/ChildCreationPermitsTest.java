package io.fieldline.transport.mqtt.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

class ChildCreationPermitsTest {

  // Runs what it is given when the test says so, as an event loop would on its next turn.
  private final List<Runnable> eventLoop = new ArrayList<>();
  private final Executor executor = eventLoop::add;
  private final List<String> events = new ArrayList<>();

  private void runEventLoop() {
    while (!eventLoop.isEmpty()) {
      eventLoop.remove(0).run();
    }
  }

  private CompletableFuture<String> creation(
      ChildCreationPermits permits, String name, CompletableFuture<String> registry) {
    return permits.run(
        () -> {
          events.add("start " + name);
          return registry;
        },
        executor,
        () -> events.add("wait " + name),
        () -> events.add("turn " + name));
  }

  @Test
  void should_run_at_most_max_creations_and_pass_a_permit_on_in_arrival_order() {
    ChildCreationPermits permits = new ChildCreationPermits(2);
    CompletableFuture<String> a = new CompletableFuture<>();
    CompletableFuture<String> b = new CompletableFuture<>();
    CompletableFuture<String> c = new CompletableFuture<>();
    CompletableFuture<String> d = new CompletableFuture<>();

    CompletableFuture<String> first = creation(permits, "a", a);
    creation(permits, "b", b);
    CompletableFuture<String> third = creation(permits, "c", c);
    creation(permits, "d", d);

    assertThat(events).containsExactly("start a", "start b", "wait c", "wait d");
    assertThat(permits.running()).isEqualTo(2);
    assertThat(permits.waiting()).isEqualTo(2);

    a.complete("A");
    assertThat(first).isCompletedWithValue("A");
    assertThat(events).as("its turn comes on its own event loop").hasSize(4);
    runEventLoop();
    assertThat(events).endsWith("turn c", "start c");
    assertThat(permits.running()).isEqualTo(2);
    assertThat(permits.waiting()).isEqualTo(1);

    b.completeExceptionally(new IllegalStateException("timed out"));
    runEventLoop();
    assertThat(events).endsWith("turn d", "start d");
    c.complete("C");
    d.complete("D");
    assertThat(third).isCompletedWithValue("C");
    assertThat(permits.running()).isZero();
    assertThat(permits.waiting()).isZero();
  }

  @Test
  void should_free_the_permit_when_a_creation_throws_instead_of_returning_a_stage() {
    ChildCreationPermits permits = new ChildCreationPermits(1);

    CompletableFuture<String> failed =
        permits.run(
            () -> {
              throw new IllegalArgumentException("bad name");
            },
            executor,
            () -> events.add("wait"),
            () -> events.add("turn"));

    assertThat(failed).isCompletedExceptionally();
    assertThat(permits.running()).isZero();
    assertThat(creation(permits, "next", CompletableFuture.completedFuture("N")))
        .isCompletedWithValue("N");
    assertThat(events).containsExactly("start next");
  }
}
