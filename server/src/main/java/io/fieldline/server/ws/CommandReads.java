package io.fieldline.server.ws;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.SortOrder;
import io.fieldline.common.query.TelemetryQueries;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The storage reads of a session's commands: the current values a subscription starts from, a
 * history answer. A command naming no key reads the device's keys first, and is refused (an {@link
 * IllegalArgumentException} the session answers) when there are more than {@code
 * max-keys-per-command}. Stateless; the stages complete on the store's threads.
 */
final class CommandReads {

  /** Most raw points one history answer may carry (keys × limit): one update, a few MB at most. */
  static final long MAX_HISTORY_POINTS = 100_000;

  private final TelemetryQueries queries;
  private final int maxKeys;

  CommandReads(TelemetryQueries queries, int maxKeys) {
    this.queries = queries;
    this.maxKeys = maxKeys;
  }

  /** What a new subscription's first update starts from. */
  CompletionStage<List<LiveSubscription.Point>> current(WsCommand command) {
    DeviceId device = command.target();
    if (command.type() == WsCommand.Type.ATTRIBUTES) {
      List<CompletableFuture<List<AttributeKvEntry>>> reads = new ArrayList<>();
      for (AttributeScope scope : AttributeScope.values()) {
        if (command.scope().contains(scope)) {
          reads.add(queries.attributes(device, scope, command.keys()).toCompletableFuture());
        }
      }
      return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
          .thenApply(
              done -> {
                List<LiveSubscription.Point> points = new ArrayList<>();
                reads.forEach(
                    read ->
                        read.join()
                            .forEach(
                                a ->
                                    points.add(
                                        new LiveSubscription.Point(a.lastUpdateTs(), a.kv()))));
                return points;
              });
    }
    if (!command.history()) {
      return queries.latest(device, command.keys()).thenApply(CommandReads::points);
    }
    long start =
        command.startTs() > 0
            ? command.startTs()
            : System.currentTimeMillis() - command.timeWindow();
    return history(command, start, start + command.timeWindow());
  }

  /** The history of {@code command} between {@code startTs} and {@code endTs}, in time order. */
  CompletionStage<List<LiveSubscription.Point>> history(
      WsCommand command, long startTs, long endTs) {
    DeviceId device = command.target();
    CompletionStage<Set<String>> keys =
        command.keys().isPresent()
            ? CompletableFuture.completedFuture(command.keys().get())
            : queries.keys(device).thenApply(Set::copyOf);
    return keys.thenCompose(
        resolved -> {
          if (resolved.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
          }
          if (resolved.size() > maxKeys) {
            throw new IllegalArgumentException(
                "The device has more than "
                    + maxKeys
                    + " keys: name the keys to read (at most "
                    + maxKeys
                    + ")");
          }
          // At most MAX_HISTORY_POINTS raw points per answer: the limit per key is lowered.
          int limit =
              (int) Math.max(1, Math.min(command.limit(), MAX_HISTORY_POINTS / resolved.size()));
          HistoryQuery query =
              new HistoryQuery(
                  resolved,
                  startTs,
                  endTs,
                  command.interval(),
                  limit,
                  command.agg(),
                  // The newest points when the limit cuts (as ThingsBoard and our REST API).
                  SortOrder.DESC);
          return queries
              .history(device, query)
              .thenApply(
                  byKey -> {
                    List<LiveSubscription.Point> points = new ArrayList<>();
                    for (List<TsKvEntry> newestFirst : byKey.values()) {
                      List<TsKvEntry> inTimeOrder = new ArrayList<>(newestFirst);
                      Collections.reverse(inTimeOrder);
                      points.addAll(points(inTimeOrder));
                    }
                    return points;
                  });
        });
  }

  private static List<LiveSubscription.Point> points(List<TsKvEntry> entries) {
    List<LiveSubscription.Point> points = new ArrayList<>(entries.size());
    entries.forEach(entry -> points.add(new LiveSubscription.Point(entry.ts(), entry.kv())));
    return points;
  }
}
