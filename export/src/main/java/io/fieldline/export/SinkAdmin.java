package io.fieldline.export;

import io.fieldline.common.feed.SinkDeadLetter;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * Managing sinks, as {@code /api/fieldline/sinks} and the console do. A definition the server
 * cannot accept fails the stage with {@link io.fieldline.export.sink.InvalidSinkException} (400), a
 * name in use with {@link io.fieldline.common.feed.SinkNameTakenException} (400); an unknown id is
 * an empty answer (404). Changes reach every node within a few seconds.
 */
public interface SinkAdmin {

  CompletionStage<SinkView> create(SinkDraft draft);

  CompletionStage<Optional<SinkView>> get(UUID id);

  CompletionStage<List<SinkView>> list();

  /** Replaces name, filter and configuration; secrets left out keep their value. */
  CompletionStage<Optional<SinkView>> update(UUID id, SinkDraft draft);

  /** Whether it existed. */
  CompletionStage<Boolean> delete(UUID id);

  CompletionStage<Optional<SinkView>> pause(UUID id);

  CompletionStage<Optional<SinkView>> resume(UUID id);

  /**
   * Delivers again everything the feed still holds from {@code fromTs} (epoch milliseconds) on;
   * records already delivered go again (consumers drop them by sequence number).
   */
  CompletionStage<Optional<SinkView>> replay(UUID id, long fromTs);

  /** The newest dead letters, at most {@code limit}; empty when the sink does not exist. */
  CompletionStage<Optional<List<SinkDeadLetter>>> deadLetters(UUID id, int limit);
}
