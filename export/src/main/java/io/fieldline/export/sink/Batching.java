package io.fieldline.export.sink;

import java.time.Duration;

/**
 * How batches are cut for a sink.
 *
 * @param maxRecords most records in one batch
 * @param maxBytes most bytes of record JSON in one batch (a record larger than it goes alone)
 * @param linger how long to wait for more records when a batch is not full; zero sends at once
 * @param timeout how long one delivery may take before it counts as failed and is retried
 */
public record Batching(int maxRecords, int maxBytes, Duration linger, Duration timeout) {
  public Batching {
    if (maxRecords < 1 || maxBytes < 1) {
      throw new IllegalArgumentException("maxRecords and maxBytes must be positive");
    }
    if (linger.isNegative() || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("linger must not be negative, timeout must be positive");
    }
  }
}
