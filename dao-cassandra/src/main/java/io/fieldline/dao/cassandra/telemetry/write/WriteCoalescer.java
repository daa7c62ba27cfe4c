package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import io.fieldline.common.StoreException;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Group commit for the write path: merges the writes (device messages: telemetry and attributes) of
 * many devices into shared unlogged batches, with at most {@code maxBatchesInFlight} batches
 * outstanding at once.
 *
 * <p>A write joins a FIFO queue. While fewer than {@code maxBatchesInFlight} batches are out, the
 * queue's head leaves at once as a batch holding every queued write that fits ({@code
 * maxStatements}, {@code maxBytes}); when all batch slots are busy, writes wait, and the next batch
 * to leave takes them together. The batch size therefore follows the load with no timer: a lone
 * write on an idle server goes out alone and immediately; at 10,000 messages per second the same
 * few slots carry dozens of messages per request, which is what makes Cassandra's CPU per message
 * fall (one request's parsing, dispatch and response shared by many mutations).
 *
 * <p>Bounds: at most {@code maxQueued} writes wait; beyond that a write fails at once with {@link
 * StoreException.Kind#OVERLOADED}. The {@link #pressure() gauge} counts writes not yet completed
 * (queued plus in batches out), overloaded at half of {@code maxQueued} and relieved at a quarter,
 * so the transport stops reading sockets long before the queue is full. Each batch also takes one
 * slot of the shared {@link WriteLimiter}; the batch itself is made by {@link UnloggedBatches}.
 *
 * <p>Every write in a batch gets the batch's outcome: a failed batch fails each of its writes (the
 * devices retransmit; every insert is idempotent). Thread-safe: the queue and the count of batches
 * out are guarded by one lock held only to enqueue or to take a batch (no I/O under it); sending is
 * driven by a work-in-progress counter, so a batch that completes synchronously does not recurse.
 */
final class WriteCoalescer {

  /** One write waiting for a batch. */
  private record Pending(
      List<SizedStatement> statements, int bytes, CompletableFuture<Void> done) {}

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final StoreMetrics metrics;
  private final UnloggedBatches batches;
  private final int maxStatements;
  private final int maxBytes;
  private final int maxBatchesInFlight;
  private final int maxQueued;
  private final PressureGauge pressure;
  private final AtomicInteger pumpRequests = new AtomicInteger();
  private final Object lock = new Object();
  private final ArrayDeque<Pending> queue = new ArrayDeque<>(); // guarded by lock
  private int batchesInFlight; // guarded by lock

  /**
   * @param batches makes the batch of the writes taken
   * @param maxStatements most statements in one batch
   * @param maxBytes most estimated bytes in one batch
   * @param maxBatchesInFlight most batches outstanding at once, at least 1
   * @param maxQueued most writes waiting for a batch, at least 4
   */
  WriteCoalescer(
      CqlSession session,
      WriteLimiter limiter,
      StoreMetrics metrics,
      UnloggedBatches batches,
      int maxStatements,
      int maxBytes,
      int maxBatchesInFlight,
      int maxQueued) {
    if (maxBatchesInFlight < 1 || maxQueued < 4) {
      throw new IllegalArgumentException("need maxBatchesInFlight >= 1 and maxQueued >= 4");
    }
    this.session = session;
    this.limiter = limiter;
    this.metrics = metrics;
    this.batches = batches;
    this.maxStatements = maxStatements;
    this.maxBytes = maxBytes;
    this.maxBatchesInFlight = maxBatchesInFlight;
    this.maxQueued = maxQueued;
    this.pressure = new PressureGauge("cassandra-pending-writes", maxQueued / 2, maxQueued / 4);
    metrics.registerPending(this, WriteCoalescer::queued);
  }

  /** Whether a write of these statements fits one batch, and so may be coalesced. */
  boolean fits(List<SizedStatement> statements) {
    return statements.size() <= maxStatements && SizedStatement.bytes(statements) <= maxBytes;
  }

  /** Writes not completed yet: queued plus carried by batches in flight. */
  PressureGauge pressure() {
    return pressure;
  }

  /** Writes waiting for a batch. */
  int queued() {
    synchronized (lock) {
      return queue.size();
    }
  }

  /**
   * Queues a write that {@link #fits}; completes with the outcome of the batch that carries it, or
   * fails at once with OVERLOADED when {@code maxQueued} writes are already waiting.
   */
  CompletionStage<Void> submit(List<SizedStatement> statements) {
    Pending pending =
        new Pending(statements, SizedStatement.bytes(statements), new CompletableFuture<>());
    // Counted before it can be taken, so a fast batch never decrements what was not counted.
    pressure.increment();
    synchronized (lock) {
      if (queue.size() >= maxQueued) {
        pressure.decrement();
        return CompletableFuture.failedFuture(
            new StoreException(
                StoreException.Kind.OVERLOADED,
                "more than " + maxQueued + " telemetry writes waiting for Cassandra"));
      }
      queue.addLast(pending);
    }
    pump();
    return pending.done();
  }

  // Sends batches while slots are free and writes wait. One thread pumps at a time; a call made
  // meanwhile (another submit, a completion, a synchronous completion inside send) asks the
  // running pump for one more pass instead of recursing.
  private void pump() {
    if (pumpRequests.getAndIncrement() != 0) {
      return;
    }
    do {
      List<Pending> batch;
      while ((batch = takeBatch()) != null) {
        send(batch);
      }
    } while (pumpRequests.decrementAndGet() != 0);
  }

  private @Nullable List<Pending> takeBatch() {
    synchronized (lock) {
      if (batchesInFlight >= maxBatchesInFlight || queue.isEmpty()) {
        return null;
      }
      List<Pending> taken = new ArrayList<>();
      int statements = 0;
      int bytes = 0;
      Pending next;
      while ((next = queue.peekFirst()) != null) {
        boolean full =
            !taken.isEmpty()
                && (statements + next.statements().size() > maxStatements
                    || bytes + next.bytes() > maxBytes);
        if (full) {
          break;
        }
        queue.pollFirst();
        taken.add(next);
        statements += next.statements().size();
        bytes += next.bytes();
      }
      batchesInFlight++;
      return taken;
    }
  }

  private void send(List<Pending> taken) {
    CompletionStage<?> sent;
    try {
      BatchStatementBuilder batch = batches.start();
      for (Pending pending : taken) {
        for (SizedStatement statement : pending.statements()) {
          batch.addStatement(statement.statement());
        }
      }
      BatchStatement request = batch.build();
      sent =
          limiter.submit(
              () -> {
                metrics.coalesced(taken.size());
                return session.executeAsync(request);
              });
    } catch (RuntimeException e) {
      // Never leave the slot taken or the writes hanging, whatever went wrong building the batch.
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete(
        (result, error) -> {
          synchronized (lock) {
            batchesInFlight--;
          }
          pump(); // the next batch leaves before this one's callbacks run
          for (Pending pending : taken) {
            pressure.decrement();
            if (error == null) {
              pending.done().complete(null);
            } else {
              pending.done().completeExceptionally(error);
            }
          }
        });
  }
}
