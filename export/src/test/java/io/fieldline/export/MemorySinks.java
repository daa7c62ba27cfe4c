package io.fieldline.export;

import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.common.feed.SinkStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/** Sinks, statuses and dead letters, in memory. */
final class MemorySinks implements SinkStore {
  final Map<UUID, SinkDefinition> definitions = new ConcurrentHashMap<>();

  /** The latest report about each sink, whichever node made it. */
  final Map<UUID, SinkNodeStatus> statuses = new ConcurrentHashMap<>();

  /** Every node's latest report, by sink and node. */
  final Map<UUID, Map<String, SinkNodeStatus>> byNode = new ConcurrentHashMap<>();

  @Override
  public CompletionStage<List<SinkDefinition>> sinks() {
    return CompletableFuture.completedFuture(List.copyOf(definitions.values()));
  }

  @Override
  public CompletionStage<Optional<SinkDefinition>> sink(UUID id) {
    return CompletableFuture.completedFuture(Optional.ofNullable(definitions.get(id)));
  }

  @Override
  public CompletionStage<Void> save(SinkDefinition sink) {
    definitions.put(sink.id(), sink);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Boolean> delete(UUID id) {
    return CompletableFuture.completedFuture(definitions.remove(id) != null);
  }

  @Override
  public CompletionStage<Void> saveStatus(SinkNodeStatus status) {
    statuses.put(status.sinkId(), status);
    byNode
        .computeIfAbsent(status.sinkId(), id -> new ConcurrentHashMap<>())
        .put(status.node(), status);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<List<SinkNodeStatus>> statuses(UUID sinkId) {
    return CompletableFuture.completedFuture(
        new ArrayList<>(byNode.getOrDefault(sinkId, Map.of()).values()));
  }

  @Override
  public CompletionStage<Void> deleteStatuses(UUID sinkId) {
    statuses.remove(sinkId);
    byNode.remove(sinkId);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> addDeadLetter(SinkDeadLetter letter) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<List<SinkDeadLetter>> deadLetters(UUID sinkId, int limit) {
    return CompletableFuture.completedFuture(List.of());
  }
}
