package io.fieldline.server.http;

import io.fieldline.common.log.LogThrottle;
import io.fieldline.common.log.LogThrottles;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listener's meters: {@code fieldline.http.connections} (open now) and {@code
 * fieldline.http.connections.rejected{reason}} (connections refused or closed by a bound), {@code
 * fieldline.http.log.lines{result=logged|suppressed}} (the lines of every {@link LogThrottle}), and
 * its log: one INFO line per reason at most every 10 s, with the number of lines left out.
 * Thread-safe.
 */
final class HttpListenerMetrics {

  static final String CONNECTIONS = "fieldline.http.connections";
  static final String REJECTED = "fieldline.http.connections.rejected";
  static final String LOG_LINES = "fieldline.http.log.lines";

  private static final Logger LOG = LoggerFactory.getLogger(HttpListenerMetrics.class);

  /** Why a connection was refused or closed; the {@code reason} tag. */
  enum Reason {
    /** Refused at once: {@code max-connections} open, none of them waiting for a request head. */
    CONNECTION_LIMIT("refused: max-connections open, all of them busy"),
    /** Refused at once: the source address has as many open as it may. */
    ADDRESS_LIMIT("refused: max-connections-per-address open from this address"),
    /** Closed: no complete request head within {@code header-read-timeout}. */
    HEADER_TIMEOUT("closed: no complete request head within header-read-timeout"),
    /** Answered 408 and closed: the request body came slower than the minimum rate. */
    BODY_TIMEOUT("closed: request body slower than body-read-timeout and min-body-rate allow"),
    /**
     * Closed: the one waiting longest for a request head when a new connection came and {@code
     * max-connections} were open.
     */
    EVICTED("closed: waited longest for a request head while max-connections were open");

    private final String text;

    Reason(String text) {
      this.text = text;
    }
  }

  private final Map<Reason, Counter> rejected = new EnumMap<>(Reason.class);
  private final LogThrottles<Reason> logs = new LogThrottles<>(Reason.class);

  HttpListenerMetrics(MeterRegistry registry, Supplier<Number> open) {
    for (Reason reason : Reason.values()) {
      rejected.put(
          reason,
          Counter.builder(REJECTED)
              .description("HTTP connections refused or closed by a listener bound")
              .tag("reason", reason.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
    FunctionCounter.builder(LOG_LINES, LogThrottle.class, unused -> LogThrottle.logged())
        .description("Client-triggered log lines of the HTTP APIs, written or left out")
        .tag("result", "logged")
        .register(registry);
    FunctionCounter.builder(LOG_LINES, LogThrottle.class, unused -> LogThrottle.suppressedInAll())
        .description("Client-triggered log lines of the HTTP APIs, written or left out")
        .tag("result", "suppressed")
        .register(registry);
    Gauge.builder(CONNECTIONS, open)
        .strongReference(true)
        .description("Open HTTP connections")
        .register(registry);
  }

  void rejected(Reason reason, InetAddress address) {
    // both EnumMaps hold an entry for every constant, put in the constructor
    Objects.requireNonNull(rejected.get(reason)).increment();
    long skipped = Objects.requireNonNull(logs.get(reason)).admit();
    if (skipped >= 0) {
      LOG.info(
          "[http|{}] connection {} ({} similar lines left out before)",
          address.getHostAddress(),
          reason.text,
          skipped);
    }
  }
}
