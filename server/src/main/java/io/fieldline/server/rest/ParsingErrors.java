package io.fieldline.server.rest;

import io.fieldline.common.log.LogThrottle;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answer to a request Pekko's HTTP parser could not read (a malformed request line or header, a
 * head or URI over its limits), in place of Pekko's default, which logs one WARN per request and
 * answers the parser's text: a ThingsBoard error body with a fixed message, and one WARN line at
 * most every 10 s with the count of those left out. Set as {@code
 * pekko.http.server.parsing.error-handler} (application.conf); Pekko creates it by reflection,
 * hence the public no-argument constructor and the one log budget of the class.
 */
public final class ParsingErrors extends ParsingErrorHandler {

  private static final Logger LOG = LoggerFactory.getLogger(ParsingErrors.class);
  private static final LogThrottle LOGS = new LogThrottle();

  public ParsingErrors() {}

  @Override
  public HttpResponse handle(
      StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
    int code = status.intValue();
    long skipped = LOGS.admit();
    if (skipped >= 0) {
      LOG.warn(
          "[http] unreadable request answered {}: {} ({} similar lines left out before)",
          code,
          RejectedRequests.loggable(info.summary()),
          skipped);
    }
    return HttpJson.error(code, message(code));
  }

  private static String message(int status) {
    return switch (status) {
      case 413 -> "request body too large";
      case 414 -> "request URI too long";
      case 431 -> "request header fields too large";
      case 501 -> "not implemented";
      case 505 -> "HTTP version not supported";
      default -> "malformed HTTP request";
    };
  }
}
