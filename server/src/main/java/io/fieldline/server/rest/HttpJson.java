package io.fieldline.server.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.DeviceConflictException;
import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.query.ReadRefusedException;
import io.fieldline.fleet.rpc.RpcRejectedException;
import io.fieldline.server.http.BodyTooSlowException;
import io.fieldline.transport.http.HttpErrors;
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
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.scaladsl.model.EntityStreamException;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.http.scaladsl.model.IllegalRequestException;
import org.apache.pekko.stream.StreamTcpException;
import org.jspecify.annotations.Nullable;

/**
 * JSON responses, the one mapping from exceptions to HTTP statuses, and the way every route
 * completes with a stage. Stateless.
 */
public final class HttpJson {

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

  /** A ThingsBoard error body with {@code status} (the device API's, {@link HttpErrors#error}). */
  public static HttpResponse error(int status, String message) {
    return HttpErrors.error(status, message);
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
    return reply(response, HttpJson::failure);
  }

  /**
   * Completes with {@code response}, a failure of it (thrown or as a failed stage) answered by
   * {@code failure}: a route's own exceptions mapped first, the rest handed on to {@link #failure}.
   */
  static Route reply(
      Supplier<CompletionStage<HttpResponse>> response, Function<Throwable, HttpResponse> failure) {
    CompletionStage<HttpResponse> stage;
    try {
      stage = response.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return Directives.completeWithFuture(stage.exceptionally(failure));
  }

  /** What failed a stage: {@code error} without the {@link CompletionException}s around it. */
  static Throwable unwrap(@Nullable Throwable error) {
    Throwable cause = error;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause == null ? new IllegalStateException("no cause") : cause;
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
   * Maps a failed stage to a response: bad input (a broken-off or too slow body among it) 400, 408
   * or 413, conflicts 409, too many waiting RPC calls 429, a read refused by the read budget 429
   * (the user's share) or 503 (the node's) with {@code Retry-After}, other storage trouble 503;
   * anything else 500, logged with its stack trace at a bounded rate.
   */
  static HttpResponse failure(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    // The request's own body failed: the client's doing (an aborted upload among them).
    if (cause instanceof EntityStreamSizeException) {
      return error(413, "request body too large");
    }
    if (cause instanceof BodyTooSlowException) {
      return error(408, "request body too slow");
    }
    if (cause instanceof EntityStreamException || cause instanceof StreamTcpException) {
      return error(400, "request body incomplete: the connection broke off");
    }
    if (cause instanceof IllegalRequestException) {
      return error(400, "malformed request");
    }
    if (cause instanceof IllegalArgumentException || cause instanceof PayloadFormatException) {
      return error(400, clientMessage(cause, "malformed request"));
    }
    if (cause instanceof DeviceConflictException) {
      return error(409, clientMessage(cause, "conflict"));
    }
    if (cause instanceof RpcRejectedException) {
      return error(429, clientMessage(cause, "too many requests"));
    }
    if (cause instanceof ReadRefusedException refused) {
      int status = refused.scope() == ReadRefusedException.Scope.USER ? 429 : 503;
      // its message is written for the client (ReadRefusedException's constructor)
      return error(status, String.valueOf(refused.getMessage()))
          .addHeader(
              RawHeader.create("Retry-After", Integer.toString(refused.retryAfterSeconds())));
    }
    if (cause instanceof StoreException store) {
      return error(
          503, "storage " + store.kind().name().toLowerCase(Locale.ROOT) + ", try again later");
    }
    return unexpectedError(cause);
  }

  /** See {@link HttpErrors#clientMessage}. */
  public static String clientMessage(Throwable error, String fallback) {
    return HttpErrors.clientMessage(error, fallback);
  }

  /** See {@link HttpErrors#unexpectedError}. */
  static HttpResponse unexpectedError(Throwable cause) {
    return HttpErrors.unexpectedError(cause);
  }

  /** See {@link HttpErrors#rejectionMessage}. */
  public static String rejectionMessage(HttpResponse response) {
    return HttpErrors.rejectionMessage(response);
  }

  /**
   * Every exception a route lets escape, answered at one place (around all routes, in place of
   * Pekko's default handler, which logs each at ERROR with its stack trace and may answer its
   * text): a body over its limit 413, a body that broke off (an aborted upload) 400, a request
   * Pekko refused 400, else as {@link #failure}. Client errors are logged by {@link
   * RejectedRequests} or the device API, at a bounded rate and without a stack trace.
   */
  public static final ExceptionHandler EXCEPTIONS =
      ExceptionHandler.newBuilder().matchAny(error -> Directives.complete(escaped(error))).build();

  private static HttpResponse escaped(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return failure(cause);
  }
}
