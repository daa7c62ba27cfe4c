package io.fieldline.server.rest;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The CORS policy of docs/rest-api.md: off unless origins are configured. A request whose {@code
 * Origin} is allowed gets {@code Access-Control-Allow-Origin} with that origin (and {@code Vary:
 * Origin}); its preflight ({@code OPTIONS} with {@code Access-Control-Request-Method}) is answered
 * 204 here, before authentication. Any other request passes through without CORS headers, so a
 * browser refuses the answer. No credentials mode: the API uses bearer tokens, not cookies.
 *
 * <p>Pekko HTTP's own {@code pekko-http-cors} module is not published on Maven Central for the
 * Pekko HTTP version we use (1.3.0), and mixing 1.1.0 with it would break the one-version rule.
 * Stateless.
 */
final class Cors extends AllDirectives {

  private static final String ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS";
  private static final String ALLOWED_HEADERS = "Content-Type, X-Authorization, Authorization";

  private final Set<String> origins;
  private final boolean anyOrigin;
  private final long maxAgeSeconds;

  Cors(RestConfig config) {
    this.origins = Set.copyOf(config.corsAllowedOrigins());
    this.anyOrigin = origins.contains("*");
    this.maxAgeSeconds = config.corsMaxAge().toSeconds();
  }

  Route wrap(Supplier<Route> inner) {
    if (origins.isEmpty()) {
      return inner.get();
    }
    return optionalHeaderValueByName(
        "Origin",
        origin -> {
          Optional<String> allowed = origin.filter(o -> anyOrigin || origins.contains(o));
          if (allowed.isEmpty()) {
            return inner.get();
          }
          List<HttpHeader> headers =
              List.of(
                  RawHeader.create("Access-Control-Allow-Origin", allowed.get()),
                  RawHeader.create("Vary", "Origin"));
          return concat(
              method(
                  HttpMethods.OPTIONS,
                  () ->
                      headerValueByName(
                          "Access-Control-Request-Method",
                          requested ->
                              complete(
                                  HttpResponse.create()
                                      .withStatus(204)
                                      .addHeaders(headers)
                                      .addHeader(
                                          RawHeader.create(
                                              "Access-Control-Allow-Methods", ALLOWED_METHODS))
                                      .addHeader(
                                          RawHeader.create(
                                              "Access-Control-Allow-Headers", ALLOWED_HEADERS))
                                      .addHeader(
                                          RawHeader.create(
                                              "Access-Control-Max-Age",
                                              Long.toString(maxAgeSeconds)))))),
              respondWithHeaders(headers, inner));
        });
  }
}
