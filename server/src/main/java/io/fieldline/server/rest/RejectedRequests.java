package io.fieldline.server.rest;

import io.fieldline.common.log.LogThrottles;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts and logs every REST request answered with a client error, whichever route or Pekko
 * rejection produced it: {@code fieldline.http.rejected{reason}}, and one log line per reason at
 * most every 10 seconds (WARN for malformed input, INFO for the rest; a misbehaving script must not
 * fill the disk). The line names the method, the path and the status, not the query or the body,
 * which may hold a token; in a device API path ({@code /api/v1/{token}/...}) the token segment is
 * masked (the device API answers those paths itself; this is the second line of defence).
 * Thread-safe.
 */
final class RejectedRequests {

  static final String REJECTED = "fieldline.http.rejected";

  private static final Logger LOG = LoggerFactory.getLogger(RejectedRequests.class);

  /** Why a request was refused; the {@code reason} tag. */
  enum Reason {
    BAD_REQUEST,
    UNAUTHENTICATED,
    NOT_FOUND,
    METHOD_NOT_ALLOWED,
    CONFLICT,
    TOO_LARGE,
    THROTTLED,
    OTHER;

    static Reason of(int status) {
      return switch (status) {
        case 400 -> BAD_REQUEST;
        case 401 -> UNAUTHENTICATED;
        case 404 -> NOT_FOUND;
        case 405 -> METHOD_NOT_ALLOWED;
        case 409 -> CONFLICT;
        case 413, 414, 431 -> TOO_LARGE;
        case 429 -> THROTTLED;
        default -> OTHER;
      };
    }
  }

  private final Map<Reason, Counter> counters = new EnumMap<>(Reason.class);
  private final LogThrottles<Reason> logs = new LogThrottles<>(Reason.class);

  RejectedRequests(MeterRegistry registry) {
    for (Reason reason : Reason.values()) {
      counters.put(
          reason,
          Counter.builder(REJECTED)
              .description("REST requests answered with a client error (4xx)")
              .tag("reason", reason.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
  }

  /** Counts {@code response} if it is a 4xx; returns it unchanged. */
  HttpResponse observe(HttpRequest request, HttpResponse response) {
    int status = response.status().intValue();
    if (status < 400 || status > 499) {
      return response;
    }
    Reason reason = Reason.of(status);
    // both EnumMaps hold an entry for every constant, put in the constructor
    Objects.requireNonNull(counters.get(reason)).increment();
    long skipped = Objects.requireNonNull(logs.get(reason)).admit();
    if (skipped >= 0) {
      String method = request.method().value();
      String path = loggable(request.getUri().path());
      if (reason == Reason.BAD_REQUEST || reason == Reason.TOO_LARGE) {
        LOG.warn(
            "[http] {} {} answered {} ({} similar lines left out before)",
            method,
            path,
            status,
            skipped);
      } else {
        LOG.info(
            "[http] {} {} answered {} ({} similar lines left out before)",
            method,
            path,
            status,
            skipped);
      }
    }
    return response;
  }

  /**
   * The path as logged: the segment after {@code /api/v1/} (a device's access token) masked as
   * {@code {token}}, whatever the case and however many slashes; control characters replaced; at
   * most 200 characters.
   */
  static String loggable(String path) {
    return printable(masked(path));
  }

  private static String masked(String path) {
    String[] segments = path.split("/", -1);
    int nonEmpty = 0;
    for (int i = 0; i < segments.length; i++) {
      if (segments[i].isEmpty()) {
        continue;
      }
      nonEmpty++;
      if (nonEmpty == 1 && !segments[i].equalsIgnoreCase("api")
          || nonEmpty == 2 && !segments[i].equalsIgnoreCase("v1")) {
        return path;
      }
      if (nonEmpty == 3) {
        // Provisioning (/api/v1/provision) carries no token in its path.
        if (segments[i].equals("provision") && i == segments.length - 1) {
          return path;
        }
        segments[i] = "{token}";
        return String.join("/", segments);
      }
    }
    return path;
  }

  // A decoded path may hold control characters (a forged log line) and is up to 2 KiB long.
  private static String printable(String path) {
    StringBuilder out = new StringBuilder(Math.min(path.length(), 200));
    for (int i = 0; i < path.length() && i < 200; i++) {
      char c = path.charAt(i);
      out.append(Character.isISOControl(c) ? '?' : c);
    }
    return path.length() > 200 ? out.append("...").toString() : out.toString();
  }
}
