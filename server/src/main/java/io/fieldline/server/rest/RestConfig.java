package io.fieldline.server.rest;

import java.time.Duration;
import java.util.List;

/**
 * The REST API's protective limits ({@code fieldline.http.*}): body size, login throttling and the
 * CORS policy. Read and validated by {@code ServerConfig}.
 *
 * @param maxBodyBytes largest request body on any endpoint; larger answers 413
 * @param loginMaxFailuresPerUser failed logins per user name within {@code loginWindow} before 429
 * @param loginMaxFailuresPerAddress failed logins per source address within {@code loginWindow}
 *     before 429
 * @param loginWindow the failure-counting window, from the first failure
 * @param loginMaxTracked most user names, and separately most addresses, remembered
 * @param corsAllowedOrigins exact origins allowed to call from a browser, {@code "*"} for any;
 *     empty means CORS is off
 * @param corsMaxAge how long a preflight answer may be cached
 */
public record RestConfig(
    long maxBodyBytes,
    int loginMaxFailuresPerUser,
    int loginMaxFailuresPerAddress,
    Duration loginWindow,
    int loginMaxTracked,
    List<String> corsAllowedOrigins,
    Duration corsMaxAge) {

  public RestConfig {
    corsAllowedOrigins = List.copyOf(corsAllowedOrigins);
  }

  /** Splits a comma-separated origin list; blanks are dropped. */
  public static List<String> origins(String commaSeparated) {
    return java.util.Arrays.stream(commaSeparated.split(","))
        .map(String::trim)
        .filter(origin -> !origin.isEmpty())
        .toList();
  }
}
