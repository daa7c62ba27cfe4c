package io.fieldline.dao.cassandra.cql;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.common.StoreException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the requests of one store write into the store's outcome: success only when every request
 * succeeded, otherwise one {@link StoreException} (translated here, counted, logged once per
 * failure episode, never logged again). Requests it sends itself each hold one {@link WriteLimiter}
 * slot; a write sent by someone else (the telemetry coalescer, which takes limiter slots per batch)
 * is only {@linkplain #track tracked}. Thread-safe; completions run on driver I/O threads.
 */
public final class WriteRunner {

  private static final Logger LOG = LoggerFactory.getLogger(WriteRunner.class);
  private static final Runnable NOTHING = () -> {};

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final StoreMetrics metrics;
  private final FailureEpisodes episodes;

  /**
   * @param what what is written, for the failure log ({@code "[cql] <what> failing"})
   */
  public WriteRunner(CqlSession session, WriteLimiter limiter, StoreMetrics metrics, String what) {
    this.session = session;
    this.limiter = limiter;
    this.metrics = metrics;
    this.episodes = new FailureEpisodes(LOG, "[cql] " + what, 60);
  }

  /**
   * Executes every request (concurrently, each holding one limiter slot) and completes when all
   * have.
   *
   * @param rows values written, counted on success
   * @param partitionUpdates table partitions touched, counted when issued
   */
  public CompletionStage<Void> run(
      StoreMetrics.Op op, List<? extends Statement<?>> requests, int rows, int partitionUpdates) {
    return run(op, requests, rows, partitionUpdates, NOTHING);
  }

  /**
   * Like {@link #run(StoreMetrics.Op, List, int, int)}, calling {@code onSuccess} first on success.
   */
  public CompletionStage<Void> run(
      StoreMetrics.Op op,
      List<? extends Statement<?>> requests,
      int rows,
      int partitionUpdates,
      Runnable onSuccess) {
    metrics.issued(partitionUpdates, requests.size());
    return complete(op, System.nanoTime(), send(requests), rows, onSuccess);
  }

  /**
   * The outcome of a write that another component sent and whose requests it counts itself (the
   * coalescer): latency from {@code startNanos}, rows, partition updates and failures are counted
   * here as for {@link #run}.
   */
  public CompletionStage<Void> track(
      StoreMetrics.Op op,
      long startNanos,
      CompletableFuture<?> outcome,
      int rows,
      int partitionUpdates,
      Runnable onSuccess) {
    metrics.issued(partitionUpdates, 0);
    return complete(op, startNanos, outcome, rows, onSuccess);
  }

  private CompletableFuture<?> send(List<? extends Statement<?>> requests) {
    CompletableFuture<?>[] all = new CompletableFuture<?>[requests.size()];
    for (int i = 0; i < all.length; i++) {
      Statement<?> request = requests.get(i);
      all[i] = limiter.submit(() -> session.executeAsync(request)).toCompletableFuture();
    }
    return all.length == 1 ? all[0] : CompletableFuture.allOf(all);
  }

  private CompletionStage<Void> complete(
      StoreMetrics.Op op, long start, CompletableFuture<?> outcome, int rows, Runnable onSuccess) {
    CompletableFuture<Void> result = new CompletableFuture<>();
    outcome.whenComplete(
        (ignored, error) -> {
          metrics.latency(op).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
          if (error == null) {
            metrics.written(rows);
            episodes.onSuccess();
            onSuccess.run();
            result.complete(null);
            return;
          }
          StoreException failure = StoreErrors.translate(error);
          metrics.failed(failure.kind());
          episodes.onFailure(failure);
          result.completeExceptionally(failure);
        });
    return result;
  }

  /** Runs a read through the limiter, translating its failure (reads are not counted). */
  public <T> CompletionStage<T> read(Supplier<CompletionStage<T>> read) {
    return StoreErrors.translated(limiter.submit(read));
  }
}
