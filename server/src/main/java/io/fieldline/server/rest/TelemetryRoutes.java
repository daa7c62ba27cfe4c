package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.Aggregation;
import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeadLetterQueries;
import io.fieldline.common.DeviceId;
import io.fieldline.common.HistoryQuery;
import io.fieldline.common.SortOrder;
import io.fieldline.common.TelemetryQueries;
import io.fieldline.common.TsKvEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * ThingsBoard's read API for one device (under {@code /api/plugins/telemetry/DEVICE/{id}}): time
 * series keys, latest values, history with aggregation, attributes; and Fieldline's dead letters
 * ({@code /api/fieldline/deadletters/DEVICE/{id}}). Reads go straight to storage, through the read
 * ports of {@code io.fieldline.common}.
 */
final class TelemetryRoutes extends AllDirectives {

  private final TelemetryQueries queries;
  private final DeadLetterQueries deadLetters;

  TelemetryRoutes(TelemetryQueries queries, DeadLetterQueries deadLetters) {
    this.queries = queries;
    this.deadLetters = deadLetters;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return concat(
        pathPrefix(
            PathMatchers.segment("plugins")
                .slash("telemetry")
                .slash("DEVICE")
                .slash(PathMatchers.uuidSegment()),
            uuid -> telemetry(new DeviceId(uuid))),
        path(
            PathMatchers.segment("fieldline")
                .slash("deadletters")
                .slash("DEVICE")
                .slash(PathMatchers.uuidSegment()),
            uuid ->
                get(
                    () ->
                        parameterOptional(
                            "limit",
                            limit ->
                                reply(
                                    () ->
                                        deadLetters(
                                            new DeviceId(uuid),
                                            (int)
                                                RequestParams.longIn(
                                                    limit
                                                        .map(l -> Map.of("limit", l))
                                                        .orElse(Map.of()),
                                                    "limit",
                                                    100L,
                                                    1,
                                                    1000)))))));
  }

  private Route telemetry(DeviceId id) {
    return get(
        () ->
            concat(
                path(
                    PathMatchers.segment("keys").slash("timeseries"),
                    () ->
                        reply(
                            () ->
                                queries
                                    .keys(id)
                                    .thenApply(
                                        keys -> {
                                          ArrayNode array = JsonViews.MAPPER.createArrayNode();
                                          keys.forEach(array::add);
                                          return HttpJson.ok(array);
                                        }))),
                path(
                    PathMatchers.segment("values").slash("timeseries"),
                    () -> parameterMap(params -> reply(() -> timeseries(id, params)))),
                path(
                    PathMatchers.segment("keys").slash("attributes"),
                    () -> reply(() -> attributeKeys(id))),
                path(
                    PathMatchers.segment("values").slash("attributes"),
                    () ->
                        parameterMap(
                            params -> reply(() -> attributes(id, Optional.empty(), params)))),
                path(
                    PathMatchers.segment("values")
                        .slash("attributes")
                        .slash(PathMatchers.segment()),
                    scope ->
                        parameterMap(
                            params ->
                                reply(() -> attributes(id, Optional.of(scope(scope)), params))))));
  }

  private CompletionStage<HttpResponse> timeseries(DeviceId id, Map<String, String> params) {
    Optional<Set<String>> keys = RequestParams.keys(params.get("keys"));
    boolean strict = Boolean.parseBoolean(params.getOrDefault("useStrictDataTypes", "false"));
    if (!params.containsKey("startTs") && !params.containsKey("endTs")) {
      return queries
          .latest(id, keys)
          .thenApply(values -> HttpJson.ok(JsonViews.timeseries(values, strict)));
    }
    // Bounded before any arithmetic: the bucket count and the partitions walked stay in range.
    long startTs = RequestParams.timestamp(params, "startTs", null);
    long endTs = RequestParams.timestamp(params, "endTs", null);
    if (endTs < startTs) {
      throw new IllegalArgumentException("endTs must not be before startTs");
    }
    Aggregation agg = RequestParams.oneOf(params, "agg", Aggregation.class, Aggregation.NONE);
    SortOrder order = RequestParams.oneOf(params, "orderBy", SortOrder.class, SortOrder.DESC);
    long interval =
        RequestParams.longIn(
            params, "interval", 0L, agg == Aggregation.NONE ? 0 : 1, RequestParams.MAX_TS);
    int limit =
        (int)
            RequestParams.longIn(
                params, "limit", (long) HistoryQuery.DEFAULT_LIMIT, 1, RequestParams.MAX_LIMIT);
    CompletionStage<Set<String>> keySet =
        keys.isPresent()
            ? CompletableFuture.completedFuture(keys.get())
            : queries.keys(id).thenApply(LinkedHashSet::new);
    return keySet.thenCompose(
        resolved ->
            resolved.isEmpty()
                ? CompletableFuture.completedFuture(
                    HttpJson.ok(JsonViews.MAPPER.createObjectNode()))
                : queries
                    .history(
                        id, new HistoryQuery(resolved, startTs, endTs, interval, limit, agg, order))
                    .thenApply(
                        byKey -> {
                          List<TsKvEntry> values = new ArrayList<>();
                          byKey.values().forEach(values::addAll);
                          return HttpJson.ok(JsonViews.timeseries(values, strict));
                        }));
  }

  private CompletionStage<HttpResponse> attributes(
      DeviceId id, Optional<AttributeScope> scope, Map<String, String> params) {
    Optional<Set<String>> keys = RequestParams.keys(params.get("keys"));
    List<AttributeScope> scopes =
        scope.map(List::of).orElse(Arrays.asList(AttributeScope.values()));
    List<CompletableFuture<List<AttributeKvEntry>>> reads = new ArrayList<>();
    for (AttributeScope each : scopes) {
      reads.add(queries.attributes(id, each, keys).toCompletableFuture());
    }
    return CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            done -> {
              List<AttributeKvEntry> all = new ArrayList<>();
              reads.forEach(read -> all.addAll(read.join()));
              return HttpJson.ok(JsonViews.attributes(all));
            });
  }

  private CompletionStage<HttpResponse> attributeKeys(DeviceId id) {
    List<CompletableFuture<List<AttributeKvEntry>>> reads = new ArrayList<>();
    for (AttributeScope scope : AttributeScope.values()) {
      reads.add(queries.attributes(id, scope, Optional.empty()).toCompletableFuture());
    }
    return CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            done -> {
              Set<String> keys = new java.util.TreeSet<>();
              reads.forEach(read -> read.join().forEach(entry -> keys.add(entry.key())));
              ArrayNode array = JsonViews.MAPPER.createArrayNode();
              keys.forEach(array::add);
              return HttpJson.ok(array);
            });
  }

  private CompletionStage<HttpResponse> deadLetters(DeviceId id, int limit) {
    return deadLetters
        .list(id, limit)
        .thenApply(
            letters -> {
              ArrayNode array = JsonViews.MAPPER.createArrayNode();
              for (var letter : letters) {
                ObjectNode node = array.addObject();
                node.put("receivedAt", letter.receivedAt());
                node.put("topic", letter.topic());
                node.put("reason", letter.reason());
                node.put("payloadBase64", Base64.getEncoder().encodeToString(letter.payload()));
                node.put(
                    "payloadText",
                    new String(letter.payload(), java.nio.charset.StandardCharsets.UTF_8));
              }
              return HttpJson.ok(array);
            });
  }

  private Route reply(Supplier<CompletionStage<HttpResponse>> response) {
    CompletionStage<HttpResponse> stage;
    try {
      stage = response.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return completeWithFuture(stage.exceptionally(HttpJson::failure));
  }

  private static AttributeScope scope(String text) {
    try {
      return AttributeScope.valueOf(text.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "scope must be one of CLIENT_SCOPE, SHARED_SCOPE, SERVER_SCOPE");
    }
  }
}
