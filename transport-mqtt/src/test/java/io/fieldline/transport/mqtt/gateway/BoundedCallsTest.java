package io.fieldline.transport.mqtt.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BoundedCallsTest {

  private final EmbeddedChannel channel = new EmbeddedChannel();
  private final AtomicBoolean open = new AtomicBoolean(true);
  private final List<CompletableFuture<String>> started = new ArrayList<>();

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
  }

  private CompletableFuture<String> call(BoundedCalls calls) {
    return calls.call(
        () -> {
          CompletableFuture<String> call = new CompletableFuture<>();
          started.add(call);
          return call;
        });
  }

  @Test
  void should_start_at_most_max_calls_and_the_next_when_one_completes() {
    BoundedCalls calls = new BoundedCalls(2, channel.eventLoop(), open::get);
    CompletableFuture<String> first = call(calls);
    call(calls);
    CompletableFuture<String> third = call(calls);
    assertThat(started).hasSize(2);

    started.get(0).complete("a");
    assertThat(first).as("completes on the event loop").isNotDone();
    channel.runPendingTasks();

    assertThat(first).isCompletedWithValue("a");
    assertThat(started).hasSize(3);
    assertThat(calls.running()).isEqualTo(2);
    started.get(2).complete("c");
    channel.runPendingTasks();
    assertThat(third).isCompletedWithValue("c");
  }

  @Test
  void should_fail_waiting_calls_without_starting_them_when_the_connection_closed() {
    BoundedCalls calls = new BoundedCalls(1, channel.eventLoop(), open::get);
    call(calls);
    CompletableFuture<String> waiting = call(calls);

    open.set(false);
    started.get(0).complete("a");
    channel.runPendingTasks();

    assertThat(started).hasSize(1);
    assertThat(waiting).isCompletedExceptionally();
    assertThat(calls.running()).isZero();
  }
}
