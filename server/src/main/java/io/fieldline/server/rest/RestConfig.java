package io.fieldline.server.rest;

import com.typesafe.config.Config;
import io.fieldline.common.config.ConfigReader;
import io.fieldline.common.query.HistoryQuery;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The REST API's protective limits ({@code fieldline.http.*}): body size, login throttling and the
 * CORS policy, read and validated by {@code ServerConfig}; and the bounds of one time-series query
 * ({@code fieldline.rest.*}, {@link QueryLimits}).
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
 * @param queries the bounds of one time-series query
 */
public record RestConfig(
    long maxBodyBytes,
    int loginMaxFailuresPerUser,
    int loginMaxFailuresPerAddress,
    Duration loginWindow,
    int loginMaxTracked,
    List<String> corsAllowedOrigins,
    Duration corsMaxAge,
    QueryLimits queries) {

  public RestConfig {
    corsAllowedOrigins = List.copyOf(corsAllowedOrigins);
    Objects.requireNonNull(queries, "queries");
  }

  /**
   * The bounds of one time-series query ({@code fieldline.rest}, documented in the server's
   * reference.conf): a query over any of them is answered 400 before storage is read. How many
   * reads run at once is bounded below, in storage ({@code fieldline.cassandra.reads}).
   *
   * @param maxKeys most keys one query names, or resolves to when it names none
   * @param maxPoints most values one history query may return: keys x {@code limit} for raw values,
   *     keys x buckets for aggregates
   * @param maxBuckets most aggregation buckets ({@code (endTs - startTs) / interval}) per key
   * @param maxRange longest {@code endTs - startTs} of a history query
   */
  public record QueryLimits(int maxKeys, int maxPoints, int maxBuckets, Duration maxRange) {

    /** The configuration path of this block. */
    public static final String PATH = "fieldline.rest";

    public QueryLimits {
      Objects.requireNonNull(maxRange, "maxRange");
    }

    /** Reads and validates {@code fieldline.rest}, listing every invalid key at once. */
    public static QueryLimits from(Config root) {
      ConfigReader r = ConfigReader.of(root, PATH);
      return r.validated(
          new QueryLimits(
              r.integer("max-keys", 1, 10_000),
              r.integer("max-points", 1, 10_000_000),
              r.integer("max-buckets", 1, HistoryQuery.MAX_BUCKETS),
              r.positiveDuration("max-range")));
    }
  }

  /** Splits a comma-separated origin list; blanks are dropped. */
  public static List<String> origins(String commaSeparated) {
    return java.util.Arrays.stream(commaSeparated.split(","))
        .map(String::trim)
        .filter(origin -> !origin.isEmpty())
        .toList();
  }
}
