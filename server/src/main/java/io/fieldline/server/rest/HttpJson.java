package io.fieldline.server.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.Device;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.DeviceId;
import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.PayloadFormatException;
import io.fieldline.common.ReadRefusedException;
import io.fieldline.common.StoreException;
import io.fieldline.server.rpc.RpcRejectedException;
import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JSON responses, the one mapping from exceptions to HTTP statuses, and the way every route
 * completes with a stage. Stateless.
 */
public final class HttpJson {

  private static final Logger LOG = LoggerFactory.getLogger(HttpJson.class);

  private HttpJson() {}

  static HttpResponse ok(JsonNode body) {
    return json(200, body);
  }

  /** 200 without a body: ThingsBoard's answer to a stored attribute or time-series change. */
  static HttpResponse okEmpty() {
    return HttpResponse.create().withStatus(StatusCodes.OK);
  }

  static HttpResponse json(int status, JsonNode body) {
    try {
      return HttpResponse.create()
          .withStatus(status)
          .withEntity(ContentTypes.APPLICATION_JSON, JsonViews.MAPPER.writeValueAsBytes(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render JSON", e);
    }
  }

  /** A ThingsBoard error body with {@code status}. */
  public static HttpResponse error(int status, String message) {
    return json(status, JsonViews.error(status, message));
  }

  /**
   * Parses a request body that must be a JSON object.
   *
   * @throws IllegalArgumentException (400) when it is not valid JSON or not an object
   */
  static JsonNode parseObject(String body) {
    try {
      JsonNode json = JsonViews.MAPPER.readTree(body);
      if (json == null || !json.isObject()) {
        throw new IllegalArgumentException("request body must be a JSON object");
      }
      return json;
    } catch (IOException e) {
      throw new IllegalArgumentException("request body is not valid JSON");
    }
  }

  static HttpResponse notFound(String what) {
    return error(StatusCodes.NOT_FOUND.intValue(), what + " not found");
  }

  /**
   * Completes with {@code response}, a failure of it (thrown or as a failed stage) answered by
   * {@link #failure}.
   */
  static Route reply(Supplier<CompletionStage<HttpResponse>> response) {
    CompletionStage<HttpResponse> stage;
    try {
      stage = response.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return Directives.completeWithFuture(stage.exceptionally(HttpJson::failure));
  }

  /**
   * {@code then} applied to the device {@code id}, or 404 when there is none: ThingsBoard checks
   * the entity before it reads or changes its values.
   */
  static CompletionStage<HttpResponse> withDevice(
      DeviceRegistry registry, DeviceId id, Function<Device, CompletionStage<HttpResponse>> then) {
    return registry
        .findById(id)
        .thenCompose(
            found ->
                found
                    .map(then)
                    .orElseGet(() -> CompletableFuture.completedFuture(notFound("device"))));
  }

  /**
   * Maps a failed stage to a response: bad input 400, conflicts 409, too many waiting RPC calls
   * 429, a read refused by the read budget 429 (the user's share) or 503 (the node's) with {@code
   * Retry-After}, other storage trouble 503.
   */
  static HttpResponse failure(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof IllegalArgumentException || cause instanceof PayloadFormatException) {
      return error(400, cause.getMessage());
    }
    if (cause instanceof DeviceConflictException) {
      return error(409, cause.getMessage());
    }
    if (cause instanceof RpcRejectedException) {
      return error(429, cause.getMessage());
    }
    if (cause instanceof ReadRefusedException refused) {
      int status = refused.scope() == ReadRefusedException.Scope.USER ? 429 : 503;
      return error(status, refused.getMessage())
          .addHeader(
              RawHeader.create("Retry-After", Integer.toString(refused.retryAfterSeconds())));
    }
    if (cause instanceof StoreException store) {
      return error(
          503,
          "storage " + store.kind().name().toLowerCase(Locale.ROOT) + ": " + store.getMessage());
    }
    LOG.error("[http] unexpected error", cause);
    return error(500, "internal error");
  }
}
