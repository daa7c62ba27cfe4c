package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.deadletter.DeadLetterQueries;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.kv.TimestampRange;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.query.Aggregation;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.SortOrder;
import io.fieldline.common.query.TelemetryQueries;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * ThingsBoard's time-series API for one device (under {@code /api/plugins/telemetry/DEVICE/{id}}):
 * keys, latest values, history with aggregation, and deletes ({@code DELETE …/timeseries/delete});
 * and Fieldline's dead letters ({@code /api/fieldline/deadletters/DEVICE/{id}}). Reads go straight
 * to storage, through the read ports of {@code io.fieldline.common}. Any entity type other than
 * {@code DEVICE} under {@code /api/plugins/telemetry}, and a device id that is not a UUID, answer
 * 400 (attributes are {@link AttributeRoutes}').
 *
 * <p>A history query is bounded before storage is read ({@link RestConfig.QueryLimits}: keys,
 * values, buckets, range; 400 beyond), and every read runs on the user's share of the node's read
 * budget ({@link TelemetryQueries#forUser}): a refused read is answered 429 or 503 with {@code
 * Retry-After} ({@link HttpJson#failure}).
 */
final class TelemetryRoutes extends AllDirectives {

  private final TelemetryQueries queries;
  private final TelemetryStore store;
  private final DeviceRegistry registry;
  private final DeadLetterQueries deadLetters;
  private final RestConfig.QueryLimits limits;

  TelemetryRoutes(
      TelemetryQueries queries,
      TelemetryStore store,
      DeviceRegistry registry,
      DeadLetterQueries deadLetters,
      RestConfig.QueryLimits limits) {
    this.queries = queries;
    this.store = store;
    this.registry = registry;
    this.deadLetters = deadLetters;
    this.limits = limits;
  }

  /** Routes under {@code /api}, reading for {@code user} (the JWT subject). */
  Route routes(String user) {
    TelemetryQueries reads = queries.forUser(user);
    return concat(
        pathPrefix(
            PathMatchers.segment("plugins")
                .slash("telemetry")
                .slash("DEVICE")
                .slash(PathMatchers.uuidSegment()),
            uuid -> telemetry(new DeviceId(uuid), reads)),
        pathPrefix(
            PathMatchers.segment("plugins").slash("telemetry").slash(PathMatchers.segment()),
            this::unsupportedEntity),
        path(
            PathMatchers.segment("fieldline")
                .slash("deadletters")
                .slash("DEVICE")
                .slash(PathMatchers.uuidSegment()),
            uuid ->
                get(
                    () ->
                        parameterMap(
                            params ->
                                HttpJson.reply(
                                    () ->
                                        deadLetters(
                                            new DeviceId(uuid),
                                            (int)
                                                RequestParams.longIn(
                                                    params, "limit", 100L, 1, 1000)))))));
  }

  /**
   * 400 for {@code /api/plugins/telemetry/{type}/...} with a type other than {@code DEVICE}, and
   * for {@code DEVICE/{id}} with an id that is not a UUID; passes anything else on (ThingsBoard's
   * device-only {@code /api/plugins/telemetry/{deviceId}/{scope}} is served by {@link
   * AttributeRoutes}).
   */
  private Route unsupportedEntity(String type) {
    if (RequestParams.isUuid(type)) {
      return reject();
    }
    if (!type.equals("DEVICE")) {
      return complete(
          HttpJson.error(400, "entity type " + type + " is not supported: only DEVICE"));
    }
    return pathPrefix(
        PathMatchers.segment(),
        id ->
            RequestParams.isUuid(id)
                ? reject()
                : complete(HttpJson.error(400, "device id must be a UUID")));
  }

  private Route telemetry(DeviceId id, TelemetryQueries reads) {
    return concat(
        get(
            () ->
                concat(
                    path(
                        PathMatchers.segment("keys").slash("timeseries"),
                        () ->
                            HttpJson.reply(
                                () ->
                                    reads
                                        .keys(id)
                                        .thenApply(keys -> HttpJson.ok(JsonViews.strings(keys))))),
                    path(
                        PathMatchers.segment("values").slash("timeseries"),
                        () ->
                            parameterMap(
                                params -> HttpJson.reply(() -> timeseries(id, params, reads)))),
                    path(
                        PathMatchers.segment("values").slash("timeseries").slash("history"),
                        () ->
                            parameterMap(
                                params -> HttpJson.reply(() -> history(id, params, reads)))))),
        delete(
            () ->
                path(
                    PathMatchers.segment("timeseries").slash("delete"),
                    () -> parameterMap(params -> HttpJson.reply(() -> delete(id, params))))));
  }

  /**
   * ThingsBoard's delete: values of {@code keys} with {@code startTs <= ts < endTs}, or every value
   * of them with {@code deleteAllDataForKeys=true}; a deleted latest value is replaced by the
   * newest remaining one with {@code rewriteLatestIfDeleted=true}. ThingsBoard's {@code
   * deleteLatest=false} (keep the latest value whatever its time) is not supported.
   */
  private CompletionStage<HttpResponse> delete(DeviceId id, Map<String, String> params) {
    Set<String> keys = RequestParams.requiredKeys(params.get("keys"));
    boolean all = RequestParams.flag(params, "deleteAllDataForKeys", false);
    boolean rewrite = RequestParams.flag(params, "rewriteLatestIfDeleted", false);
    if (!RequestParams.flag(params, "deleteLatest", true)) {
      throw new IllegalArgumentException("deleteLatest=false is not supported");
    }
    long startTs;
    long endTs;
    if (all) {
      startTs = TimestampRange.MIN;
      endTs = TimestampRange.MAX;
    } else {
      if (!params.containsKey("startTs") || !params.containsKey("endTs")) {
        throw new IllegalArgumentException(
            "startTs and endTs are required unless deleteAllDataForKeys=true");
      }
      startTs = RequestParams.timestamp(params, "startTs", null);
      endTs = RequestParams.timestamp(params, "endTs", null);
      if (endTs < startTs) {
        throw new IllegalArgumentException("endTs must not be before startTs");
      }
    }
    return HttpJson.withDevice(
        registry,
        id,
        device ->
            store
                .deleteTelemetry(id, keys, startTs, endTs, rewrite)
                .thenApply(deleted -> HttpJson.okEmpty()));
  }

  /**
   * {@code …/values/timeseries/history}, the path ThingsBoard's newer clients read history from:
   * {@link #timeseries}'s history with {@code startTs} and {@code endTs} required (without them the
   * older path answers latest values, this one 400).
   */
  private CompletionStage<HttpResponse> history(
      DeviceId id, Map<String, String> params, TelemetryQueries reads) {
    if (!params.containsKey("startTs") || !params.containsKey("endTs")) {
      throw new IllegalArgumentException("startTs and endTs are required");
    }
    return timeseries(id, params, reads);
  }

  private CompletionStage<HttpResponse> timeseries(
      DeviceId id, Map<String, String> params, TelemetryQueries reads) {
    Optional<Set<String>> keys = RequestParams.keys(params.get("keys"), limits.maxKeys());
    boolean strict = Boolean.parseBoolean(params.getOrDefault("useStrictDataTypes", "false"));
    if (!params.containsKey("startTs") && !params.containsKey("endTs")) {
      return reads
          .latest(id, keys)
          .thenApply(values -> HttpJson.ok(JsonViews.timeseries(values, strict)));
    }
    // Bounded before any arithmetic: the bucket count and the partitions walked stay in range.
    long startTs = RequestParams.timestamp(params, "startTs", null);
    long endTs = RequestParams.timestamp(params, "endTs", null);
    if (endTs < startTs) {
      throw new IllegalArgumentException("endTs must not be before startTs");
    }
    if (endTs - startTs > limits.maxRange().toMillis()) {
      throw new IllegalArgumentException(
          "endTs - startTs must be at most "
              + limits.maxRange().toMillis()
              + " ms ("
              + limits.maxRange().toDays()
              + " days); split the range");
    }
    Aggregation agg = RequestParams.oneOf(params, "agg", Aggregation.class, Aggregation.NONE);
    SortOrder order = RequestParams.oneOf(params, "orderBy", SortOrder.class, SortOrder.DESC);
    long interval =
        RequestParams.longIn(
            params, "interval", 0L, agg == Aggregation.NONE ? 0 : 1, RequestParams.MAX_TS);
    int limit =
        (int)
            RequestParams.longIn(
                params, "limit", (long) HistoryQuery.DEFAULT_LIMIT, 1, limits.maxPoints());
    long perKey = agg == Aggregation.NONE ? limit : buckets(startTs, endTs, interval);
    CompletionStage<Set<String>> keySet =
        keys.isPresent()
            ? CompletableFuture.completedFuture(keys.get())
            : reads.keys(id).thenApply(LinkedHashSet::new);
    return keySet.thenCompose(
        resolved -> {
          if (resolved.isEmpty()) {
            return CompletableFuture.completedFuture(
                HttpJson.ok(JsonViews.MAPPER.createObjectNode()));
          }
          checkPoints(resolved.size(), perKey, keys.isPresent());
          return reads
              .history(id, new HistoryQuery(resolved, startTs, endTs, interval, limit, agg, order))
              .thenApply(
                  byKey -> {
                    List<TsKvEntry> values = new ArrayList<>();
                    byKey.values().forEach(values::addAll);
                    return HttpJson.ok(JsonViews.timeseries(values, strict));
                  });
        });
  }

  private long buckets(long startTs, long endTs, long interval) {
    long buckets = HistoryQuery.bucketCount(startTs, endTs, interval);
    if (buckets > limits.maxBuckets()) {
      throw new IllegalArgumentException(
          "too many intervals: (endTs - startTs) / interval = "
              + buckets
              + ", at most "
              + limits.maxBuckets()
              + "; use a larger interval or a shorter range");
    }
    return buckets;
  }

  // Keys x values per key: what the answer holds at most.
  private void checkPoints(int keyCount, long perKey, boolean named) {
    if (keyCount > limits.maxKeys()) {
      throw new IllegalArgumentException(
          "the device has "
              + keyCount
              + " time-series keys, more than "
              + limits.maxKeys()
              + " per query; name the keys to read in keys=");
    }
    if (keyCount * perKey > limits.maxPoints()) {
      throw new IllegalArgumentException(
          "the query may return "
              + keyCount * perKey
              + " values ("
              + keyCount
              + (named ? " keys" : " keys of the device")
              + " x "
              + perKey
              + "), more than "
              + limits.maxPoints()
              + "; ask for fewer keys, a lower limit or a larger interval");
    }
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
}
