package io.fieldline.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.NameRules;
import io.fieldline.common.feed.FeedStore;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.common.feed.SinkStore;
import io.fieldline.export.sink.InvalidSinkException;
import io.fieldline.export.sink.SinkFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The {@link SinkAdmin} over the stored definitions: validates with the sink type's factory, keeps
 * secrets write-only, and sums every node's report into a sink's status. Changes reach this node's
 * exporter at once and the others' within their refresh interval.
 */
public final class ExportAdmin implements SinkAdmin {

  // A node that has not reported for this long no longer counts toward lag.
  private static final long STALE_STATUS_MILLIS = 30_000;

  private final SinkStore sinks;
  private final FeedStore feeds;
  private final Map<String, SinkFactory> factories;
  private final int maxSinks;
  private final Runnable changed;
  private final LongSupplier clock = System::currentTimeMillis;

  /** An administration over {@code exporter}'s sink types, telling it of every change. */
  public ExportAdmin(SinkStore sinks, FeedStore feeds, Exporter exporter) {
    this(sinks, feeds, exporter.factories(), exporter.config().maxSinks(), exporter::refreshSoon);
  }

  ExportAdmin(
      SinkStore sinks,
      FeedStore feeds,
      Map<String, SinkFactory> factories,
      int maxSinks,
      Runnable changed) {
    this.sinks = sinks;
    this.feeds = feeds;
    this.factories = Map.copyOf(factories);
    this.maxSinks = maxSinks;
    this.changed = changed;
  }

  @Override
  public CompletionStage<SinkView> create(SinkDraft draft) {
    return sinks
        .sinks()
        .thenCompose(
            all -> {
              if (all.size() >= maxSinks) {
                return failed("at most " + maxSinks + " sinks (fieldline.export.max-sinks)");
              }
              long now = clock.getAsLong();
              SinkDefinition definition;
              try {
                definition = define(UUID.randomUUID(), draft, null, now, now, false, 0, 0);
              } catch (InvalidSinkException e) {
                return CompletableFuture.failedFuture(e);
              }
              return sinks.save(definition).thenCompose(saved -> view(definition));
            })
        .whenComplete((view, error) -> changed.run());
  }

  @Override
  public CompletionStage<Optional<SinkView>> get(UUID id) {
    return sinks
        .sink(id)
        .thenCompose(
            found ->
                found.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<SinkView>empty())
                    : view(found.get()).thenApply(Optional::of));
  }

  @Override
  public CompletionStage<List<SinkView>> list() {
    return sinks
        .sinks()
        .thenCompose(
            all -> {
              List<CompletableFuture<SinkView>> views = new ArrayList<>();
              all.stream()
                  .sorted((a, b) -> a.name().compareTo(b.name()))
                  .forEach(definition -> views.add(view(definition).toCompletableFuture()));
              return CompletableFuture.allOf(views.toArray(CompletableFuture[]::new))
                  .thenApply(done -> views.stream().map(CompletableFuture::join).toList());
            });
  }

  @Override
  public CompletionStage<Optional<SinkView>> update(UUID id, SinkDraft draft) {
    return change(
        id,
        old ->
            define(
                id,
                draft,
                old.type().equals(draft.type()) ? Exporter.object(old.configurationJson()) : null,
                old.createdTime(),
                clock.getAsLong(),
                old.paused(),
                old.replayFrom(),
                old.generation()));
  }

  @Override
  public CompletionStage<Boolean> delete(UUID id) {
    return sinks
        .delete(id)
        .thenCompose(
            deleted ->
                deleted
                    ? feeds.deleteCursors(id).thenApply(done -> true)
                    : CompletableFuture.completedFuture(false))
        .whenComplete((deleted, error) -> changed.run());
  }

  @Override
  public CompletionStage<Optional<SinkView>> pause(UUID id) {
    return change(id, old -> with(old, true, old.replayFrom(), old.generation()));
  }

  @Override
  public CompletionStage<Optional<SinkView>> resume(UUID id) {
    return change(id, old -> with(old, false, old.replayFrom(), old.generation()));
  }

  @Override
  public CompletionStage<Optional<SinkView>> replay(UUID id, long fromTs) {
    if (fromTs < 0) {
      return CompletableFuture.failedFuture(
          new InvalidSinkException("fromTs must not be negative"));
    }
    // Retired logs come back so that what they hold is delivered again; the new generation voids
    // every node's cursors of this sink.
    return feeds
        .reopenRetired()
        .thenCompose(
            done ->
                change(
                    id, old -> with(old, old.paused(), Math.max(1, fromTs), old.generation() + 1)))
        .thenCompose(view -> sinks.deleteStatuses(id).thenApply(done -> view));
  }

  @Override
  public CompletionStage<Optional<List<SinkDeadLetter>>> deadLetters(UUID id, int limit) {
    return sinks
        .sink(id)
        .thenCompose(
            found ->
                found.isEmpty()
                    ? CompletableFuture.completedFuture(Optional.<List<SinkDeadLetter>>empty())
                    : sinks.deadLetters(id, limit).thenApply(Optional::of));
  }

  /** A definition change that may be refused. */
  private interface Change {
    SinkDefinition apply(SinkDefinition old) throws InvalidSinkException;
  }

  private CompletionStage<Optional<SinkView>> change(UUID id, Change change) {
    return sinks
        .sink(id)
        .thenCompose(
            found -> {
              if (found.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<SinkView>empty());
              }
              SinkDefinition next;
              try {
                next = change.apply(found.get());
              } catch (InvalidSinkException e) {
                return CompletableFuture.failedFuture(e);
              }
              return sinks.save(next).thenCompose(saved -> view(next)).thenApply(Optional::of);
            })
        .whenComplete((view, error) -> changed.run());
  }

  private SinkDefinition with(SinkDefinition old, boolean paused, long replayFrom, int generation) {
    return new SinkDefinition(
        old.id(),
        old.name(),
        old.type(),
        old.filterJson(),
        old.configurationJson(),
        paused,
        old.createdTime(),
        clock.getAsLong(),
        replayFrom,
        generation);
  }

  private SinkDefinition define(
      UUID id,
      SinkDraft draft,
      @Nullable ObjectNode previous,
      long created,
      long updated,
      boolean paused,
      long replayFrom,
      int generation)
      throws InvalidSinkException {
    String name = draft.name().strip();
    String wrong = NameRules.violation(name, NameRules.MAX_LENGTH);
    if (wrong != null) {
      throw new InvalidSinkException("name: " + wrong);
    }
    SinkFactory factory = factories.get(draft.type());
    if (factory == null) {
      throw new InvalidSinkException(
          "type must be one of "
              + String.join(", ", factories.keySet().stream().sorted().toList()));
    }
    ObjectNode filter = SinkFilter.validate(draft.filter());
    ObjectNode configuration = factory.validate(draft.configuration(), previous);
    return new SinkDefinition(
        id,
        name,
        draft.type(),
        filter.toString(),
        configuration.toString(),
        paused,
        created,
        updated,
        replayFrom,
        generation);
  }

  private CompletionStage<SinkView> view(SinkDefinition definition) {
    return sinks
        .statuses(definition.id())
        .thenApply(
            statuses ->
                new SinkView(
                    definition.id(),
                    definition.name(),
                    definition.type(),
                    Exporter.object(definition.filterJson()),
                    redacted(definition),
                    definition.paused(),
                    definition.createdTime(),
                    definition.updatedTime(),
                    status(definition, statuses)));
  }

  private ObjectNode redacted(SinkDefinition definition) {
    SinkFactory factory = factories.get(definition.type());
    ObjectNode stored = Exporter.object(definition.configurationJson());
    return factory == null ? stored.removeAll() : factory.redacted(stored);
  }

  private SinkStatus status(SinkDefinition definition, List<SinkNodeStatus> statuses) {
    long now = clock.getAsLong();
    long delivered = 0;
    long lag = 0;
    long oldest = 0;
    String state = definition.paused() ? "PAUSED" : "RUNNING";
    String lastError = null;
    long lastErrorAt = 0;
    for (SinkNodeStatus status : statuses) {
      delivered += status.delivered();
      if (now - status.updatedAt() > STALE_STATUS_MILLIS) {
        continue;
      }
      lag += status.lagRecords();
      if (status.oldestUndeliveredAt() > 0) {
        oldest =
            oldest == 0
                ? status.oldestUndeliveredAt()
                : Math.min(oldest, status.oldestUndeliveredAt());
      }
      if (!definition.paused() && rank(status.state()) > rank(state)) {
        state = status.state();
      }
      if (status.lastError() != null && status.lastErrorAt() >= lastErrorAt) {
        lastError = status.lastError();
        lastErrorAt = status.lastErrorAt();
      }
    }
    return new SinkStatus(
        state, delivered, lag, oldest == 0 ? 0 : Math.max(0, now - oldest), lastError, lastErrorAt);
  }

  private static int rank(String state) {
    return switch (state) {
      case "ERROR" -> 3;
      case "RETRYING" -> 2;
      default -> 1;
    };
  }

  private static <T> CompletionStage<T> failed(String message) {
    return CompletableFuture.failedFuture(new InvalidSinkException(message));
  }
}
