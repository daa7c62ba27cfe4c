package io.fieldline.transport.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.log.LogThrottle;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Error answers in ThingsBoard's shape, the same for the REST API (the server's {@code
 * rest.HttpJson} builds on them) and the HTTP device API: the error body, the rule for which
 * exception text may reach a client, the one rate-limited log of unexpected failures, and the short
 * form of a Pekko rejection. Stateless apart from that log budget; thread-safe.
 */
public final class HttpErrors {

  /** ThingsBoard's {@code errorCode} for a 400 ({@code BAD_REQUEST_PARAMS}). */
  public static final int BAD_REQUEST_PARAMS = 31;

  private static final Logger LOG = LoggerFactory.getLogger(HttpErrors.class);
  private static final LogThrottle UNEXPECTED = new LogThrottle();
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private HttpErrors() {}

  /** A ThingsBoard error body with {@code status}. */
  public static HttpResponse error(int status, String message) {
    try {
      return HttpResponse.create()
          .withStatus(status)
          .withEntity(
              ContentTypes.APPLICATION_JSON, MAPPER.writeValueAsBytes(body(status, message)));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render JSON", e);
    }
  }

  /**
   * ThingsBoard's error body: {@code {"status":..,"message":..,"errorCode":..,"timestamp":..}},
   * with the {@code errorCode} ThingsBoard gives that status.
   */
  static ObjectNode body(int status, String message) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("status", status);
    node.put("message", message);
    node.put("errorCode", errorCode(status));
    node.put("timestamp", System.currentTimeMillis());
    return node;
  }

  // ThingsBoard's ThingsboardErrorCode numbers. It answers a taken device name with 400
  // BAD_REQUEST_PARAMS; Fieldline answers 409 and keeps that code.
  private static int errorCode(int status) {
    return switch (status) {
      case 400, 409, 413 -> BAD_REQUEST_PARAMS;
      case 401 -> 10; // AUTHENTICATION
      case 403 -> 20; // PERMISSION_DENIED
      case 404 -> 32; // ITEM_NOT_FOUND
      case 429 -> 33; // TOO_MANY_REQUESTS
      default -> 2; // GENERAL
    };
  }

  /**
   * The message of {@code error} if Fieldline's own code wrote it for the client (thrown from an
   * {@code io.fieldline} class, not a subclass of the JDK's such as {@link NumberFormatException}),
   * else {@code fallback}: no text of a library or the JDK (exception names, parser positions,
   * driver details) reaches an answer.
   */
  public static String clientMessage(Throwable error, String fallback) {
    String message = error.getMessage();
    StackTraceElement[] trace = error.getStackTrace();
    boolean ours =
        message != null
            && !message.isBlank()
            && trace.length > 0
            && trace[0].getClassName().startsWith("io.fieldline.")
            && (error.getClass().getName().startsWith("io.fieldline.")
                || error.getClass() == IllegalArgumentException.class
                || error.getClass() == IllegalStateException.class
                || error.getClass() == java.util.NoSuchElementException.class);
    return ours && message != null ? message : fallback;
  }

  /** 500, logged at ERROR with its stack trace at most once per 10 s (a bug, not the client's). */
  public static HttpResponse unexpectedError(Throwable cause) {
    long skipped = UNEXPECTED.admit();
    if (skipped >= 0) {
      LOG.error("[http] unexpected error ({} similar lines left out before)", skipped, cause);
    }
    return error(500, "internal error");
  }

  /**
   * The message of a Pekko rejection's default answer without its detail: the first line ("The
   * query parameter 'x' was malformed"), which names what was wrong; the lines after it carry the
   * text of the exception behind it, which stays out of answers.
   */
  public static String rejectionMessage(HttpResponse response) {
    String text =
        response.entity() instanceof HttpEntity.Strict strict
            ? strict.getData().utf8String()
            : response.status().reason();
    int newline = text.indexOf('\n');
    String first = (newline < 0 ? text : text.substring(0, newline)).strip();
    if (first.endsWith(":")) {
      first = first.substring(0, first.length() - 1);
    }
    if (first.isEmpty()) {
      return response.status().reason();
    }
    return first.length() > 200 ? first.substring(0, 200) + "..." : first;
  }
}
