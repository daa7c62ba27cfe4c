package io.fieldline.transport.mqtt.session;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/**
 * The node's budget of gateway child creations: at most {@code gateway.max-concurrent-creations}
 * run at once, every gateway session together. Each creation reserves its names by a lightweight
 * transaction on the one partition every creation contends on ({@code device_by_name}); many at
 * once contend, time out and slow every device's writes, so a fleet of gateways creating children
 * takes turns here instead.
 *
 * <p>A creation beyond the budget waits in arrival order; its session is told at once ({@code
 * onWait}: it stops reading its socket, so nothing piles up behind it) and again just before its
 * turn starts, on its own executor ({@code onTurn}). A permit passes straight from a completed
 * creation to the next one waiting. The queue is bounded by what feeds it: a gateway session has at
 * most one bulk creation and {@code gateway.registry-concurrency} lone creations outstanding, and
 * the node at most {@code max-connections} sessions.
 *
 * <p>Thread-safe: shared by every event loop; a creation completes wherever its registry call does.
 */
public final class ChildCreationPermits {

  private final int max;
  private final Object lock = new Object();
  // Guarded by lock.
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();
  private int running;

  /**
   * @param max creations running at once ({@code gateway.max-concurrent-creations})
   */
  public ChildCreationPermits(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max must be at least 1, got " + max);
    }
    this.max = max;
  }

  /**
   * Starts {@code creation} now if a permit is free, else once one frees; the permit is held until
   * the stage it returns completes.
   *
   * @param executor where a creation that waited starts: the caller's event loop (so that {@code
   *     onWait}, run on the caller's thread, always comes before {@code onTurn})
   * @param onWait run at once, on the caller's thread, when the creation has to wait
   * @param onTurn run on {@code executor} just before a creation that waited starts
   * @return the creation's outcome
   */
  public <T> CompletableFuture<T> run(
      Supplier<? extends CompletionStage<T>> creation,
      Executor executor,
      Runnable onWait,
      Runnable onTurn) {
    CompletableFuture<T> result = new CompletableFuture<>();
    boolean now;
    synchronized (lock) {
      now = running < max;
      if (now) {
        running++;
      } else {
        waiting.add(
            () ->
                executor.execute(
                    () -> {
                      onTurn.run();
                      start(creation, result);
                    }));
      }
    }
    if (now) {
      start(creation, result);
    } else {
      onWait.run();
    }
    return result;
  }

  /** Creations running now. */
  public int running() {
    synchronized (lock) {
      return running;
    }
  }

  /** Creations waiting for a permit now. */
  public int waiting() {
    synchronized (lock) {
      return waiting.size();
    }
  }

  private <T> void start(
      Supplier<? extends CompletionStage<T>> creation, CompletableFuture<T> result) {
    CompletionStage<T> stage;
    try {
      stage = creation.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    stage.whenComplete(
        (value, error) -> {
          release();
          if (error != null) {
            result.completeExceptionally(error);
          } else {
            result.complete(value);
          }
        });
  }

  // The permit passes to the next creation waiting, if any.
  private void release() {
    Runnable next;
    synchronized (lock) {
      next = waiting.poll();
      if (next == null) {
        running--;
      }
    }
    if (next != null) {
      next.run();
    }
  }
}
