package io.fieldline.server.ws;

import io.fieldline.common.DeviceRegistry;
import io.fieldline.common.TelemetryQueries;
import io.fieldline.server.live.LiveData;
import io.fieldline.server.rest.JwtTokens;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What every WebSocket session of this node shares: the settings, the ports it reads through, the
 * live data it watches, the meters, and the count of open sessions per user ({@code
 * max-sessions-per-user}).
 */
final class WsSessions {

  private final WsConfig config;
  private final JwtTokens tokens;
  private final DeviceRegistry registry;
  private final TelemetryQueries queries;
  private final LiveData live;
  private final WsMetrics metrics;
  private final Map<String, Integer> perUser = new ConcurrentHashMap<>();

  WsSessions(
      WsConfig config,
      JwtTokens tokens,
      DeviceRegistry registry,
      TelemetryQueries queries,
      LiveData live,
      WsMetrics metrics) {
    this.config = config;
    this.tokens = tokens;
    this.registry = registry;
    this.queries = queries;
    this.live = live;
    this.metrics = metrics;
  }

  /** Takes one of {@code user}'s session slots; false when all are taken. */
  boolean admit(String user) {
    boolean[] admitted = {false};
    perUser.compute(
        user,
        (u, open) -> {
          int now = open == null ? 0 : open;
          if (now >= config.maxSessionsPerUser()) {
            return open;
          }
          admitted[0] = true;
          return now + 1;
        });
    return admitted[0];
  }

  /** Gives back a slot taken by {@link #admit}. */
  void release(String user) {
    perUser.computeIfPresent(user, (u, open) -> open <= 1 ? null : open - 1);
  }

  WsConfig config() {
    return config;
  }

  JwtTokens tokens() {
    return tokens;
  }

  DeviceRegistry registry() {
    return registry;
  }

  TelemetryQueries queries() {
    return queries;
  }

  LiveData live() {
    return live;
  }

  WsMetrics metrics() {
    return metrics;
  }
}
