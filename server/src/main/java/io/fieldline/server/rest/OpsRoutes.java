package io.fieldline.server.rest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Unauthenticated operational endpoints: {@code GET /health/live} (the process serves HTTP), {@code
 * GET /health/ready} (Cassandra answers and the schema is in place; 503 otherwise, so load
 * balancers stop routing here) and {@code GET /metrics} (Prometheus text format, open as scrapers
 * expect).
 */
final class OpsRoutes extends AllDirectives {

  private final Supplier<CompletionStage<Boolean>> readiness;
  private final PrometheusMeterRegistry prometheus;

  OpsRoutes(Supplier<CompletionStage<Boolean>> readiness, PrometheusMeterRegistry prometheus) {
    this.readiness = readiness;
    this.prometheus = prometheus;
  }

  Route routes() {
    return concat(
        path(
            PathMatchers.segment("health").slash("live"),
            () -> get(() -> complete(status(200, "UP")))),
        path(
            PathMatchers.segment("health").slash("ready"),
            () ->
                get(
                    () ->
                        completeWithFuture(
                            readiness
                                .get()
                                .thenApply(ready -> ready ? status(200, "UP") : status(503, "DOWN"))
                                .exceptionally(error -> status(503, "DOWN"))))),
        path(
            "metrics",
            () ->
                get(
                    () ->
                        complete(
                            HttpResponse.create()
                                .withEntity(ContentTypes.TEXT_PLAIN_UTF8, prometheus.scrape())))));
  }

  private static HttpResponse status(int code, String status) {
    ObjectNode body = JsonViews.MAPPER.createObjectNode();
    body.put("status", status);
    return HttpJson.json(code, body);
  }
}
