package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The one place where the write path's batches are made: unlogged (the statements of one message
 * share a partition, and those of many messages need no atomicity across devices), idempotent
 * (every insert is, so the driver may retry), at the write consistency. The {@link WriteCoalescer}
 * fills one batch with the messages of many devices; the store {@link #split splits} a message too
 * big for a coalesced batch (or every message, when coalescing is off) into batches of its own.
 * Immutable and thread-safe; each builder it returns is confined to its caller.
 */
final class UnloggedBatches {

  private final ConsistencyLevel consistency;
  private final int maxStatements;
  private final int maxBytes;

  /**
   * @param consistency consistency level of every batch
   * @param maxStatements most statements in a batch made by {@link #split}
   * @param maxBytes most estimated bytes in a batch made by {@link #split}
   */
  UnloggedBatches(ConsistencyLevel consistency, int maxStatements, int maxBytes) {
    this.consistency = consistency;
    this.maxStatements = maxStatements;
    this.maxBytes = maxBytes;
  }

  /** An empty batch with the write path's settings. */
  BatchStatementBuilder start() {
    return BatchStatement.builder(BatchType.UNLOGGED)
        .setIdempotence(true)
        .setConsistencyLevel(consistency);
  }

  /**
   * Consecutive statements, up to {@code maxStatements} and {@code maxBytes} per batch; a statement
   * bigger than the byte budget goes alone (a one-partition batch is not size-checked by
   * Cassandra).
   */
  List<BatchStatement> split(List<SizedStatement> statements) {
    List<BatchStatement> batches = new ArrayList<>(1);
    @Nullable BatchStatementBuilder batch = null;
    int count = 0;
    int bytes = 0;
    for (SizedStatement statement : statements) {
      if (batch != null && (count == maxStatements || bytes + statement.bytes() > maxBytes)) {
        batches.add(batch.build());
        batch = null;
      }
      if (batch == null) {
        batch = start();
        count = 0;
        bytes = 0;
      }
      batch.addStatement(statement.statement());
      count++;
      bytes += statement.bytes();
    }
    if (batch != null) {
      batches.add(batch.build());
    }
    return batches;
  }
}
