package io.fieldline.server.ws;

import io.fieldline.common.device.DeviceRegistry;
import io.fieldline.common.query.TelemetryQueries;
import io.fieldline.fleet.live.LiveData;
import io.fieldline.server.rest.JwtTokens;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every WebSocket session of this node shares: the settings, the ports it reads through, the
 * live data it watches, the meters, the memory budget, and the count of open sessions per user
 * ({@code max-sessions-per-user}) and on the node ({@code max-sessions}).
 */
final class WsSessions {

  private final WsConfig config;
  private final JwtTokens tokens;
  private final DeviceRegistry registry;
  private final TelemetryQueries queries;
  private final LiveData live;
  private final WsMetrics metrics;
  private final WsMemory memory;
  private final AtomicInteger sessions = new AtomicInteger();
  private final Map<String, Integer> perUser = new ConcurrentHashMap<>();
  private final Set<WsSession> open = ConcurrentHashMap.newKeySet();

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
    this.memory = new WsMemory(config.memoryBudget());
    metrics.memory(memory);
  }

  /**
   * A session started (its connection's streams run); false if the node already has {@code
   * max-sessions} (the session must then be refused, and still closed).
   */
  boolean opened(WsSession session) {
    open.add(session);
    metrics.opened();
    return sessions.incrementAndGet() <= config.maxSessions();
  }

  /** A session ended; called once per session, by its {@code close}. */
  void closed(WsSession session, WsSession.CloseReason reason) {
    open.remove(session);
    sessions.decrementAndGet();
    metrics.closed(reason);
  }

  /** Closes every open session (the server stops): each client is told by a close frame. */
  void closeAll() {
    List.copyOf(open)
        .forEach(session -> session.close(WsSession.CloseReason.SERVER_STOPPING, null));
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

  WsMemory memory() {
    return memory;
  }

  WsMetrics metrics() {
    return metrics;
  }
}
