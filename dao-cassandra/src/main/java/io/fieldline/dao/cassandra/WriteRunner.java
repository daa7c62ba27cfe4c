package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Statement;
import io.fieldline.common.StoreException;
import io.fieldline.dao.cassandra.internal.cql.FailureEpisodes;
import io.fieldline.dao.cassandra.internal.cql.StoreErrors;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the requests of one store write through the {@link WriteLimiter} and turns their outcome
 * into the store's: success only when every request succeeded, otherwise one {@link StoreException}
 * (translated here, counted, logged once per failure episode, never logged again). Thread-safe;
 * completions run on driver I/O threads.
 */
final class WriteRunner {

  private static final Logger LOG = LoggerFactory.getLogger(WriteRunner.class);

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final StoreMetrics metrics;
  private final FailureEpisodes episodes;
  private final @Nullable WriteCoalescer coalescer;

  WriteRunner(CqlSession session, WriteLimiter limiter, StoreMetrics metrics, String what) {
    this(session, limiter, metrics, what, null);
  }

  /**
   * @param coalescer merges concurrent writes into shared requests, or null for none
   */
  WriteRunner(
      CqlSession session,
      WriteLimiter limiter,
      StoreMetrics metrics,
      String what,
      @Nullable WriteCoalescer coalescer) {
    this.coalescer = coalescer;
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
  CompletionStage<Void> run(
      StoreMetrics.Op op, List<? extends Statement<?>> requests, int rows, int partitionUpdates) {
    return run(op, requests, rows, partitionUpdates, () -> {});
  }

  /**
   * Like {@link #run(StoreMetrics.Op, List, int, int)}, calling {@code onSuccess} first on success.
   */
  CompletionStage<Void> run(
      StoreMetrics.Op op,
      List<? extends Statement<?>> requests,
      int rows,
      int partitionUpdates,
      Runnable onSuccess) {
    metrics.issued(partitionUpdates, requests.size());
    return complete(op, System.nanoTime(), send(requests), rows, onSuccess);
  }

  /**
   * Writes {@code statements} as one write, merged with concurrent writes into shared requests by
   * the {@link WriteCoalescer} when it fits one batch; otherwise as its own batches.
   */
  CompletionStage<Void> runCoalesced(
      StoreMetrics.Op op,
      List<SizedStatement> statements,
      int rows,
      int partitionUpdates,
      Runnable onSuccess,
      java.util.function.Function<List<SizedStatement>, List<? extends Statement<?>>> batches) {
    if (coalescer == null || !coalescer.fits(statements)) {
      return run(op, batches.apply(statements), rows, partitionUpdates, onSuccess);
    }
    metrics.issued(partitionUpdates, 0); // the coalescer counts the requests it sends
    long start = System.nanoTime();
    return complete(op, start, coalescer.submit(statements).toCompletableFuture(), rows, onSuccess);
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
  <T> CompletionStage<T> read(Supplier<CompletionStage<T>> read) {
    CompletableFuture<T> result = new CompletableFuture<>();
    limiter
        .submit(read)
        .whenComplete(
            (value, error) -> {
              if (error != null) {
                result.completeExceptionally(StoreErrors.translate(error));
              } else {
                result.complete(value);
              }
            });
    return result;
  }
}
