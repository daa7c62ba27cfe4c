package io.fieldline.export.sink;

import io.fieldline.export.ExportRecord;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Where records go. The exporter calls {@link #deliver} with one batch at a time per sink and node
 * (the next only after the previous stage completed), records in delivery order: per-device order
 * is the order of the list.
 */
public interface Sink extends AutoCloseable {

  /**
   * Starts connecting ahead of the first delivery, without blocking the caller; called once by the
   * exporter after creating the sink. A sink that connects per delivery does nothing.
   */
  default void start() {}

  /** How the exporter should cut batches for this sink. */
  Batching batching();

  /**
   * Delivers a batch. The stage never fails: it completes with the batch's {@link Delivery}, and
   * within {@link Batching#timeout()} (a sink that cannot tell by then answers {@link
   * Delivery.Retry}).
   */
  CompletionStage<Delivery> deliver(List<ExportRecord> batch);

  /**
   * Releases connections and threads; a delivery in progress completes with {@link Delivery.Retry}.
   */
  @Override
  void close();
}
