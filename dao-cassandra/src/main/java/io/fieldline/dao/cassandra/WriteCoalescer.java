package io.fieldline.dao.cassandra;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Merges concurrent writes into fewer requests: group commit for the write path.
 *
 * <p>Each write (one device message: a few statements for its {@code ts_kv} and latest-values
 * partitions) joins a queue and submits one <em>send</em> to the {@link WriteLimiter}. A send that
 * gets a slot takes every queued write that fits into one unlogged batch ({@code
 * max-batch-statements}, {@code max-batch-bytes}) and sends them as one request; a send that finds
 * the queue empty, because an earlier send took its write along, completes at once. So while
 * Cassandra keeps up, a write goes out alone with no added delay, and as soon as requests back up
 * in the limiter, the waiting writes leave together: fewer requests, less Cassandra CPU per row,
 * the batch size following the load. There is no timer and no window to tune.
 *
 * <p>Every write in a batch gets the batch's outcome: a failed batch fails each of its writes (the
 * devices retransmit; inserts are idempotent). Thread-safe; the queue is guarded by its own lock
 * (short critical sections, no I/O under it).
 */
final class WriteCoalescer {

  /** One write waiting for a batch. */
  private record Pending(List<SizedStatement> statements, int bytes, CompletableFuture<Void> done) {}

  private final CqlSession session;
  private final WriteLimiter limiter;
  private final StoreMetrics metrics;
  private final ConsistencyLevel consistency;
  private final int maxStatements;
  private final int maxBytes;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();

  WriteCoalescer(
      CqlSession session,
      WriteLimiter limiter,
      StoreMetrics metrics,
      ConsistencyLevel consistency,
      int maxStatements,
      int maxBytes) {
    this.session = session;
    this.limiter = limiter;
    this.metrics = metrics;
    this.consistency = consistency;
    this.maxStatements = maxStatements;
    this.maxBytes = maxBytes;
  }

  /** Whether a write of these statements fits one batch, and so may be coalesced. */
  boolean fits(List<SizedStatement> statements) {
    return statements.size() <= maxStatements && bytes(statements) <= maxBytes;
  }

  /**
   * Queues a write that {@link #fits} and asks the limiter for a send; completes with the outcome
   * of the batch that carried it (failing with the limiter's OVERLOADED if it never left).
   */
  CompletionStage<Void> submit(List<SizedStatement> statements) {
    Pending pending = new Pending(statements, bytes(statements), new CompletableFuture<>());
    synchronized (queue) {
      queue.addLast(pending);
    }
    limiter.submit(this::sendQueued).whenComplete((ignored, error) -> {
      if (error != null && withdraw(pending)) {
        // Refused by the limiter before any send took it along: fail it alone.
        pending.done().completeExceptionally(error);
      }
    });
    return pending.done();
  }

  private boolean withdraw(Pending pending) {
    synchronized (queue) {
      return queue.remove(pending);
    }
  }

  // Runs holding one limiter slot: everything that fits goes out as one request.
  private CompletionStage<?> sendQueued() {
    List<Pending> taken = new ArrayList<>();
    int statements = 0;
    int bytes = 0;
    synchronized (queue) {
      Pending next;
      while ((next = queue.peekFirst()) != null) {
        boolean full = !taken.isEmpty()
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
    }
    if (taken.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    BatchStatementBuilder batch = BatchStatement.builder(BatchType.UNLOGGED)
        .setIdempotence(true)
        .setConsistencyLevel(consistency);
    for (Pending pending : taken) {
      for (SizedStatement statement : pending.statements()) {
        batch.addStatement(statement.statement());
      }
    }
    metrics.coalesced(taken.size());
    CompletionStage<?> sent;
    try {
      sent = session.executeAsync(batch.build());
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    return sent.whenComplete((result, error) -> {
      for (Pending pending : taken) {
        if (error == null) {
          pending.done().complete(null);
        } else {
          pending.done().completeExceptionally(error);
        }
      }
    });
  }

  private static int bytes(List<SizedStatement> statements) {
    int total = 0;
    for (SizedStatement statement : statements) {
      total += statement.bytes();
    }
    return total;
  }
}
