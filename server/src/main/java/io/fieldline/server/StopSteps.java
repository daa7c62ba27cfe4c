package io.fieldline.server;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What to undo, newest first. Each tier adds a step as soon as the thing it started exists, so
 * stopping after a failed start undoes exactly what was started. Used from the starting thread and
 * then once from {@link FieldlineServer#close()}.
 */
final class StopSteps {

  private static final Logger LOG = LoggerFactory.getLogger(StopSteps.class);

  private record Step(String name, Runnable action) {}

  private final Deque<Step> steps = new ArrayDeque<>();

  /** Adds {@code action}, to run before every step added earlier. */
  void add(String name, Runnable action) {
    steps.push(new Step(name, action));
  }

  /** Runs every step, newest first; a step that fails is logged and the next one runs. */
  void runAll() {
    while (!steps.isEmpty()) {
      Step step = steps.pop();
      try {
        step.action().run();
      } catch (RuntimeException e) {
        LOG.warn("stopping {} failed: {}", step.name(), e.toString());
      }
    }
  }

  /** Waits for {@code stage} up to {@code timeout}; logs (and moves on) if it does not complete. */
  static void await(CompletionStage<?> stage, Duration timeout, String what) {
    try {
      stage.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn("{} did not stop cleanly within {}: {}", what, timeout, e.toString());
    }
  }
}
