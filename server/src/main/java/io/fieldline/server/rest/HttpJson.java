package io.fieldline.server.rest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.fieldline.common.DeviceConflictException;
import io.fieldline.common.StoreException;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** JSON responses and the one mapping from exceptions to HTTP statuses. Stateless. */
final class HttpJson {

  private static final Logger LOG = LoggerFactory.getLogger(HttpJson.class);

  private HttpJson() {}

  static HttpResponse ok(JsonNode body) {
    return json(200, body);
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

  static HttpResponse error(int status, String message) {
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

  /** Maps a failed stage to a response: bad input 400, conflicts 409, storage trouble 503. */
  static HttpResponse failure(Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof IllegalArgumentException) {
      return error(400, cause.getMessage());
    }
    if (cause instanceof DeviceConflictException) {
      return error(409, cause.getMessage());
    }
    if (cause instanceof StoreException store) {
      return error(
          503,
          "storage "
              + store.kind().name().toLowerCase(java.util.Locale.ROOT)
              + ": "
              + store.getMessage());
    }
    LOG.error("[http] unexpected error", cause);
    return error(500, "internal error");
  }
}
