package io.fieldline.common.feed;

import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * Where sinks are kept: their definitions, what each node reports about them, and the batches their
 * receivers refused. Stages fail with {@link io.fieldline.common.StoreException}.
 */
public interface SinkStore {

  CompletionStage<List<SinkDefinition>> sinks();

  CompletionStage<Optional<SinkDefinition>> sink(UUID id);

  /**
   * Creates or replaces a sink; a name taken by another sink fails the stage with {@link
   * SinkNameTakenException}.
   */
  CompletionStage<Void> save(SinkDefinition sink);

  /** Deletes a sink with its statuses and dead letters; whether it existed. */
  CompletionStage<Boolean> delete(UUID id);

  CompletionStage<Void> saveStatus(SinkNodeStatus status);

  /** Every node's latest report about a sink. */
  CompletionStage<List<SinkNodeStatus>> statuses(UUID sinkId);

  /** Resets every node's delivered count of a sink (a replay starts counting again). */
  CompletionStage<Void> deleteStatuses(UUID sinkId);

  CompletionStage<Void> addDeadLetter(SinkDeadLetter letter);

  /** The newest dead letters of a sink, at most {@code limit}. */
  CompletionStage<List<SinkDeadLetter>> deadLetters(UUID sinkId, int limit);
}
