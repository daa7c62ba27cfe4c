package io.fieldline.server.rest;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.transport.common.payload.PayloadParser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ThingsBoard's attribute API for one device, under {@code /api/plugins/telemetry/DEVICE/{id}}:
 * save ({@code POST …/attributes/{scope}} and the older {@code POST …/{scope}}), read ({@code GET
 * …/values/attributes[/{scope}]?keys=}), keys ({@code GET …/keys/attributes[/{scope}]}) and delete
 * ({@code DELETE …/{scope}?keys=}); also ThingsBoard's device-only forms {@code POST|DELETE
 * /api/plugins/telemetry/{id}/{scope}}. The device must exist (404 otherwise).
 *
 * <p>A save or delete answers 200 once storage has it, and only then tells the device's listeners
 * on every node ({@link DeviceEvents}: the device's MQTT session pushes shared attributes). The
 * event is handed off before the answer, so one client's consecutive changes are published in
 * order, but the answer does not wait for its delivery, and a failed publish is logged without
 * failing a change that is stored. Values are typed as ThingsBoard's REST API types them: numbers,
 * booleans, strings (a numeric-looking string stays a string: no type cast, unlike the device API)
 * and nested objects or arrays kept as JSON.
 *
 * <p>Immutable; each request runs on a Pekko HTTP dispatcher thread and continues on whichever
 * thread completes its storage stage, where the event is published (listeners must not block).
 */
final class AttributeRoutes extends AllDirectives {

  private static final Logger LOG = LoggerFactory.getLogger(AttributeRoutes.class);

  private final DeviceRegistry registry;
  private final TelemetryStore store;
  private final TelemetryQueries queries;
  private final DeviceEvents events;
  private final PayloadParser parser;
  private final LongSupplier clock;

  /**
   * @param maxStringValueLength longest string value accepted, in characters; 0 for no limit (the
   *     device API's {@code fieldline.payload.max-string-value-length})
   */
  AttributeRoutes(
      DeviceRegistry registry,
      TelemetryStore store,
      TelemetryQueries queries,
      DeviceEvents events,
      int maxStringValueLength) {
    this(registry, store, queries, events, maxStringValueLength, System::currentTimeMillis);
  }

  AttributeRoutes(
      DeviceRegistry registry,
      TelemetryStore store,
      TelemetryQueries queries,
      DeviceEvents events,
      int maxStringValueLength,
      LongSupplier clock) {
    this.registry = registry;
    this.store = store;
    this.queries = queries;
    this.events = events;
    this.parser = new PayloadParser(false, maxStringValueLength);
    this.clock = clock;
  }

  /** Routes under {@code /api}, reading for {@code user} (the JWT subject). */
  Route routes(String user) {
    TelemetryQueries reads = queries.forUser(user);
    return pathPrefix(
        PathMatchers.segment("plugins").slash("telemetry"),
        () ->
            concat(
                pathPrefix(
                    PathMatchers.segment("DEVICE").slash(PathMatchers.uuidSegment()),
                    uuid -> device(new DeviceId(uuid), reads)),
                pathPrefix(PathMatchers.uuidSegment(), uuid -> changes(new DeviceId(uuid)))));
  }

  private Route device(DeviceId id, TelemetryQueries reads) {
    return concat(
        get(
            () ->
                concat(
                    path(
                        PathMatchers.segment("values").slash("attributes"),
                        () ->
                            parameterMap(
                                params -> HttpJson.reply(() -> read(id, null, params, reads)))),
                    path(
                        PathMatchers.segment("values")
                            .slash("attributes")
                            .slash(PathMatchers.segment()),
                        scope ->
                            parameterMap(
                                params -> HttpJson.reply(() -> read(id, scope, params, reads)))),
                    path(
                        PathMatchers.segment("keys").slash("attributes"),
                        () -> HttpJson.reply(() -> keys(id, null, reads))),
                    path(
                        PathMatchers.segment("keys")
                            .slash("attributes")
                            .slash(PathMatchers.segment()),
                        scope -> HttpJson.reply(() -> keys(id, scope, reads))))),
        post(
            () ->
                path(
                    PathMatchers.segment("attributes").slash(PathMatchers.segment()),
                    scope -> save(id, scope))),
        changes(id));
  }

  /** {@code POST …/{scope}} (save) and {@code DELETE …/{scope}?keys=} (delete). */
  private Route changes(DeviceId id) {
    return path(
        PathMatchers.segment(),
        scope ->
            concat(
                post(() -> save(id, scope)),
                delete(
                    () ->
                        parameterOptional(
                            "keys",
                            keys -> HttpJson.reply(() -> delete(id, scope, keys.orElse(null)))))));
  }

  private Route save(DeviceId id, String scope) {
    return entity(
        Unmarshaller.entityToString(), body -> HttpJson.reply(() -> save(id, scope, body)));
  }

  private CompletionStage<HttpResponse> save(DeviceId id, String scopeText, String body) {
    AttributeScope scope = scope(scopeText);
    if (scope == AttributeScope.CLIENT_SCOPE) {
      throw new IllegalArgumentException(
          "scope must be SERVER_SCOPE or SHARED_SCOPE: CLIENT_SCOPE attributes are written by the"
              + " device");
    }
    List<KvEntry> entries = parser.parseAttributes(body.getBytes(StandardCharsets.UTF_8));
    if (entries.isEmpty()) {
      throw new IllegalArgumentException("no attributes in the request body");
    }
    if (entries.size() > RequestParams.MAX_ATTRIBUTES) {
      throw new IllegalArgumentException(
          "at most " + RequestParams.MAX_ATTRIBUTES + " attributes per request");
    }
    return HttpJson.withDevice(
        registry,
        id,
        device -> {
          long now = clock.getAsLong();
          return store
              .writeAttributes(id, scope, entries, now)
              .thenApply(
                  written -> {
                    List<AttributeKvEntry> updated = new ArrayList<>(entries.size());
                    entries.forEach(kv -> updated.add(new AttributeKvEntry(now, kv)));
                    publish(new DeviceEvent.AttributesUpdated(id, scope, updated));
                    return HttpJson.okEmpty();
                  });
        });
  }

  private CompletionStage<HttpResponse> delete(
      DeviceId id, String scopeText, @Nullable String keysParam) {
    AttributeScope scope = scope(scopeText);
    Set<String> keys = RequestParams.requiredKeys(keysParam);
    return HttpJson.withDevice(
        registry,
        id,
        device ->
            store
                .deleteAttributes(id, scope, keys)
                .thenApply(
                    deleted -> {
                      publish(new DeviceEvent.AttributesDeleted(id, scope, List.copyOf(keys)));
                      return HttpJson.okEmpty();
                    }));
  }

  private CompletionStage<HttpResponse> read(
      DeviceId id, @Nullable String scope, Map<String, String> params, TelemetryQueries reads) {
    List<AttributeScope> scopes = scopes(scope);
    Optional<Set<String>> keys = RequestParams.keys(params.get("keys"));
    return HttpJson.withDevice(
        registry,
        id,
        device ->
            read(id, scopes, keys, reads)
                .thenApply(attributes -> HttpJson.ok(JsonViews.attributes(attributes))));
  }

  private CompletionStage<HttpResponse> keys(
      DeviceId id, @Nullable String scope, TelemetryQueries reads) {
    List<AttributeScope> scopes = scopes(scope);
    return HttpJson.withDevice(
        registry,
        id,
        device ->
            read(id, scopes, Optional.empty(), reads)
                .thenApply(
                    attributes -> {
                      Set<String> keys = new TreeSet<>();
                      attributes.forEach(attribute -> keys.add(attribute.key()));
                      return HttpJson.ok(JsonViews.strings(keys));
                    }));
  }

  /**
   * The attributes of every scope listed, in scope order, read one scope after the other: one
   * request holds one of its user's read slots at a time.
   */
  private CompletionStage<List<AttributeKvEntry>> read(
      DeviceId id,
      List<AttributeScope> scopes,
      Optional<Set<String>> keys,
      TelemetryQueries reads) {
    CompletionStage<List<AttributeKvEntry>> all = CompletableFuture.completedFuture(List.of());
    for (AttributeScope scope : scopes) {
      all =
          all.thenCompose(
              before ->
                  reads
                      .attributes(id, scope, keys)
                      .thenApply(
                          these -> {
                            List<AttributeKvEntry> joined = new ArrayList<>(before);
                            joined.addAll(these);
                            return joined;
                          }));
    }
    return all;
  }

  // Handed off, not awaited: the change is stored whatever becomes of its event.
  private void publish(DeviceEvent event) {
    try {
      events
          .publish(event)
          .whenComplete(
              (took, error) -> {
                if (error != null) {
                  logPublishFailure(event, error);
                }
              });
    } catch (RuntimeException e) {
      logPublishFailure(event, e);
    }
  }

  private static void logPublishFailure(DeviceEvent event, Throwable error) {
    LOG.warn(
        "[device|{}] stored, but publishing {} failed",
        event.deviceId(),
        event.getClass().getSimpleName(),
        error);
  }

  private static List<AttributeScope> scopes(@Nullable String scope) {
    return scope == null ? Arrays.asList(AttributeScope.values()) : List.of(scope(scope));
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
