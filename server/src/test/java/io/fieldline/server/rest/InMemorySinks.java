package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.StoreException;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.common.feed.SinkNameTakenException;
import io.fieldline.export.SinkAdmin;
import io.fieldline.export.SinkDraft;
import io.fieldline.export.SinkStatus;
import io.fieldline.export.SinkView;
import io.fieldline.export.sink.InvalidSinkException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A {@link SinkAdmin} in a map, with the port's documented answers: unique names ({@link
 * SinkNameTakenException}), only {@code KAFKA} and {@code WEBHOOK} ({@link InvalidSinkException},
 * failing the stage wrapped in a {@link CompletionException} as an asynchronous step would), empty
 * answers for unknown ids, the field {@code secret} of a configuration left out of every view. It
 * remembers the last replay and dead-letter limit it was asked for, and fails every call with a
 * {@link StoreException} while {@link #failing} is set. Times count up from 1000. Changes are
 * synchronized; one HTTP test at a time.
 */
final class InMemorySinks implements SinkAdmin {

  private static final Set<String> TYPES = Set.of("KAFKA", "WEBHOOK");

  private final Map<UUID, SinkView> sinks = new LinkedHashMap<>();
  private final Map<UUID, List<SinkDeadLetter>> deadLetters = new LinkedHashMap<>();
  private final AtomicLong clock = new AtomicLong(1000);

  volatile boolean failing;
  volatile long lastReplayFrom = -1;
  volatile int lastDeadLetterLimit = -1;

  SinkView add(String name) {
    return create(
            new SinkDraft(
                name,
                "WEBHOOK",
                RoutesTestBase.JSON.createObjectNode(),
                RoutesTestBase.JSON.createObjectNode().put("url", "http://127.0.0.1:9/" + name)))
        .toCompletableFuture()
        .join();
  }

  /** Sets the status a later read shows. */
  synchronized void status(UUID id, SinkStatus status) {
    SinkView old = sinks.get(id);
    sinks.put(id, copy(old, old.paused(), old.updatedTime(), status));
  }

  /** A refused batch, {@code n}-th of the sink, created at {@code 2000 + n}. */
  synchronized SinkDeadLetter addDeadLetter(UUID sink, int n) {
    SinkDeadLetter letter =
        new SinkDeadLetter(
            sink, UUID.randomUUID(), 2000 + n, n, 400, "refused " + n, "[{\"seq\":" + n + "}]");
    deadLetters.computeIfAbsent(sink, id -> new ArrayList<>()).add(letter);
    return letter;
  }

  synchronized Optional<SinkView> stored(UUID id) {
    return Optional.ofNullable(sinks.get(id));
  }

  @Override
  public synchronized CompletionStage<SinkView> create(SinkDraft draft) {
    return checked(draft, null)
        .thenApply(
            ok -> {
              long now = clock.getAndIncrement();
              SinkView view =
                  new SinkView(
                      UUID.randomUUID(),
                      draft.name(),
                      draft.type(),
                      draft.filter(),
                      withoutSecret(draft),
                      false,
                      now,
                      now,
                      new SinkStatus("RUNNING", 0, 0, 0, null, 0));
              sinks.put(view.id(), view);
              return view;
            });
  }

  @Override
  public CompletionStage<Optional<SinkView>> get(UUID id) {
    return answer(() -> stored(id));
  }

  @Override
  public CompletionStage<List<SinkView>> list() {
    return answer(
        () -> {
          synchronized (this) {
            return sinks.values().stream().sorted(Comparator.comparing(SinkView::name)).toList();
          }
        });
  }

  @Override
  public synchronized CompletionStage<Optional<SinkView>> update(UUID id, SinkDraft draft) {
    SinkView old = sinks.get(id);
    if (old == null) {
      return answer(Optional::empty);
    }
    return checked(draft, id)
        .thenApply(
            ok -> {
              SinkView view =
                  new SinkView(
                      id,
                      draft.name(),
                      draft.type(),
                      draft.filter(),
                      withoutSecret(draft),
                      old.paused(),
                      old.createdTime(),
                      clock.getAndIncrement(),
                      old.status());
              sinks.put(id, view);
              return Optional.of(view);
            });
  }

  @Override
  public synchronized CompletionStage<Boolean> delete(UUID id) {
    return answer(() -> sinks.remove(id) != null);
  }

  @Override
  public CompletionStage<Optional<SinkView>> pause(UUID id) {
    return paused(id, true);
  }

  @Override
  public CompletionStage<Optional<SinkView>> resume(UUID id) {
    return paused(id, false);
  }

  @Override
  public CompletionStage<Optional<SinkView>> replay(UUID id, long fromTs) {
    lastReplayFrom = fromTs;
    return answer(() -> stored(id));
  }

  @Override
  public synchronized CompletionStage<Optional<List<SinkDeadLetter>>> deadLetters(
      UUID id, int limit) {
    lastDeadLetterLimit = limit;
    if (!sinks.containsKey(id)) {
      return answer(Optional::empty);
    }
    List<SinkDeadLetter> newestFirst = new ArrayList<>(deadLetters.getOrDefault(id, List.of()));
    newestFirst.sort(Comparator.comparingLong(SinkDeadLetter::createdTime).reversed());
    return answer(() -> Optional.of(newestFirst.stream().limit(limit).toList()));
  }

  private synchronized CompletionStage<Optional<SinkView>> paused(UUID id, boolean paused) {
    SinkView old = sinks.get(id);
    if (old == null) {
      return answer(Optional::empty);
    }
    SinkStatus status = old.status();
    SinkStatus changed =
        new SinkStatus(
            paused ? "PAUSED" : "RUNNING",
            status.delivered(),
            status.lagRecords(),
            status.lagMs(),
            status.lastError(),
            status.lastErrorTime());
    SinkView view = copy(old, paused, clock.getAndIncrement(), changed);
    sinks.put(id, view);
    return answer(() -> Optional.of(view));
  }

  // A name taken fails the stage at once; a wrong type one step later, wrapped, as the export
  // module's asynchronous checks would.
  private CompletionStage<Void> checked(SinkDraft draft, UUID self) {
    if (failing) {
      return CompletableFuture.failedFuture(
          new StoreException(StoreException.Kind.UNAVAILABLE, "down"));
    }
    boolean taken =
        sinks.values().stream()
            .anyMatch(sink -> sink.name().equals(draft.name()) && !sink.id().equals(self));
    if (taken) {
      return CompletableFuture.failedFuture(new SinkNameTakenException(draft.name()));
    }
    return CompletableFuture.completedFuture((Void) null)
        .thenAccept(
            ok -> {
              if (!TYPES.contains(draft.type())) {
                throw new CompletionException(
                    new InvalidSinkException("unknown sink type " + draft.type()));
              }
            });
  }

  private <T> CompletionStage<T> answer(Supplier<T> value) {
    if (failing) {
      return CompletableFuture.failedFuture(
          new StoreException(StoreException.Kind.UNAVAILABLE, "down"));
    }
    return CompletableFuture.completedFuture(value.get());
  }

  private static ObjectNode withoutSecret(SinkDraft draft) {
    ObjectNode shown = draft.configuration().deepCopy();
    shown.remove("secret");
    return shown;
  }

  private static SinkView copy(SinkView old, boolean paused, long updatedTime, SinkStatus status) {
    return new SinkView(
        old.id(),
        old.name(),
        old.type(),
        old.filter(),
        old.configuration(),
        paused,
        old.createdTime(),
        updatedTime,
        status);
  }
}
