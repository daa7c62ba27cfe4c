package io.fieldline.transport.mqtt.gateway;

import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * At most {@code max} asynchronous calls running at once; the others wait, in order, for one to
 * complete. Each call's result completes on the event loop, so what follows it may touch the
 * session's state. A gateway session uses one for its registry lookups and links and one (of one)
 * for its device creations.
 *
 * <p>Calls still waiting when the connection has closed are not started: they fail at once, so a
 * gateway that leaves with thousands of children to create does not keep the registry busy.
 *
 * <p>Confined to the channel's event loop. The queue of waiting calls is bounded by what feeds it:
 * at most {@code gateway.max-children} children are being resolved per session.
 */
final class BoundedCalls {

  private final int max;
  private final EventExecutor eventLoop;
  private final BooleanSupplier open;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private int running;

  /**
   * @param open whether the connection is still open (calls are started only while it is)
   */
  BoundedCalls(int max, EventExecutor eventLoop, BooleanSupplier open) {
    this.max = max;
    this.eventLoop = eventLoop;
    this.open = open;
  }

  /** Runs {@code call} now if fewer than {@code max} run, else once enough have completed. */
  <T> CompletableFuture<T> call(Supplier<? extends CompletionStage<T>> call) {
    assert eventLoop.inEventLoop();
    CompletableFuture<T> result = new CompletableFuture<>();
    Runnable start = () -> start(call, result);
    if (running < max) {
      start.run();
    } else {
      waiting.add(start);
    }
    return result;
  }

  /** Calls running now. */
  int running() {
    return running;
  }

  private <T> void start(Supplier<? extends CompletionStage<T>> call, CompletableFuture<T> result) {
    if (!open.getAsBoolean()) {
      result.completeExceptionally(new IllegalStateException("connection closed"));
      return;
    }
    running++;
    CompletionStage<T> stage;
    try {
      stage = call.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    stage.whenComplete(
        (value, error) ->
            eventLoop.execute(
                () -> {
                  running--;
                  while (running < max && !waiting.isEmpty()) {
                    waiting.poll().run();
                  }
                  if (error != null) {
                    result.completeExceptionally(unwrapped(error));
                  } else {
                    result.complete(value);
                  }
                }));
  }

  static Throwable unwrapped(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }
}
