package io.fieldline.server.rest;

import io.fieldline.common.feed.SinkNameTakenException;
import io.fieldline.export.SinkAdmin;
import io.fieldline.export.SinkView;
import io.fieldline.export.sink.InvalidSinkException;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * Fieldline's export sinks (issue 28, docs/rest-api.md "Export sinks"), under {@code
 * /api/fieldline/sinks}: {@code GET} (all) and {@code POST} (create) on the collection, {@code
 * GET|PUT|DELETE /{id}}, {@code POST /{id}/pause}, {@code /resume} and {@code /replay?fromTs=} (or
 * {@code {"fromTs":..}}), and {@code GET /{id}/deadLetters?limit=}. Everything goes through the
 * export module's port, {@link SinkAdmin}; this class checks the request's shape and maps the
 * answers: an unknown id 404, a definition the export module refuses ({@link InvalidSinkException})
 * or a name in use ({@link SinkNameTakenException}) 400, the rest as {@link HttpJson#failure}. A
 * sink id that is not a UUID answers 400 on every path below the collection. Stateless; the stages
 * complete on whatever thread the port completes them.
 */
final class SinkRoutes extends AllDirectives {

  /** Dead letters answered when {@code limit} is not given. */
  static final long DEFAULT_DEAD_LETTERS = 100;

  /** Largest {@code limit} of a dead-letter read. */
  static final long MAX_DEAD_LETTERS = 1000;

  private final SinkAdmin sinks;

  SinkRoutes(SinkAdmin sinks) {
    this.sinks = sinks;
  }

  /** Routes under {@code /api}. */
  Route routes() {
    return pathPrefix(
        PathMatchers.segment("fieldline").slash("sinks"),
        () ->
            concat(
                pathEnd(
                    () ->
                        concat(
                            get(() -> reply(this::list)),
                            post(() -> withBody(body -> reply(() -> create(body)))))),
                pathPrefix(PathMatchers.segment(), this::sink)));
  }

  private Route sink(String segment) {
    if (!RequestParams.isUuid(segment)) {
      return complete(HttpJson.error(400, "sink id must be a UUID"));
    }
    UUID id = UUID.fromString(segment);
    return concat(
        pathEnd(
            () ->
                concat(
                    get(() -> reply(() -> viewOr404(sinks.get(id)))),
                    put(() -> withBody(body -> reply(() -> update(id, body)))),
                    delete(() -> reply(() -> delete(id))))),
        path("pause", () -> post(() -> reply(() -> viewOr404(sinks.pause(id))))),
        path("resume", () -> post(() -> reply(() -> viewOr404(sinks.resume(id))))),
        path(
            "replay",
            () ->
                post(
                    () ->
                        parameterMap(
                            params -> withBody(body -> reply(() -> replay(id, params, body)))))),
        path(
            "deadLetters",
            () -> get(() -> parameterMap(params -> reply(() -> deadLetters(id, params))))));
  }

  private CompletionStage<HttpResponse> list() {
    return sinks.list().thenApply(all -> HttpJson.ok(SinkJson.views(all)));
  }

  private CompletionStage<HttpResponse> create(String body) {
    return sinks.create(SinkJson.draft(body)).thenApply(view -> HttpJson.ok(SinkJson.view(view)));
  }

  private CompletionStage<HttpResponse> update(UUID id, String body) {
    return viewOr404(sinks.update(id, SinkJson.draft(body)));
  }

  private CompletionStage<HttpResponse> delete(UUID id) {
    return sinks
        .delete(id)
        .thenApply(
            deleted ->
                deleted
                    ? HttpJson.ok(JsonViews.MAPPER.createObjectNode())
                    : HttpJson.notFound("sink"));
  }

  private CompletionStage<HttpResponse> replay(UUID id, Map<String, String> params, String body) {
    return viewOr404(sinks.replay(id, SinkJson.fromTs(params, body)));
  }

  private CompletionStage<HttpResponse> deadLetters(UUID id, Map<String, String> params) {
    int limit =
        (int) RequestParams.longIn(params, "limit", DEFAULT_DEAD_LETTERS, 1, MAX_DEAD_LETTERS);
    return sinks
        .deadLetters(id, limit)
        .thenApply(
            found ->
                found
                    .map(letters -> HttpJson.ok(SinkJson.deadLetters(letters)))
                    .orElseGet(() -> HttpJson.notFound("sink")));
  }

  private static CompletionStage<HttpResponse> viewOr404(
      CompletionStage<Optional<SinkView>> found) {
    return found.thenApply(
        view ->
            view.map(sink -> HttpJson.ok(SinkJson.view(sink)))
                .orElseGet(() -> HttpJson.notFound("sink")));
  }

  private Route withBody(Function<String, Route> inner) {
    return entity(Unmarshaller.entityToString(), inner);
  }

  private static Route reply(Supplier<CompletionStage<HttpResponse>> response) {
    return HttpJson.reply(response, SinkRoutes::failure);
  }

  /** A refused definition or a taken name 400 with its message; the rest as every route maps it. */
  static HttpResponse failure(Throwable error) {
    Throwable cause = HttpJson.unwrap(error);
    if (cause instanceof InvalidSinkException || cause instanceof SinkNameTakenException) {
      return HttpJson.error(400, HttpJson.clientMessage(cause, "invalid sink definition"));
    }
    return HttpJson.failure(cause);
  }
}
