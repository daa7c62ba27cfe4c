package io.fieldline.server.ws;

import io.fieldline.common.log.LogThrottle;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * The WebSocket API's meters: open sessions and subscriptions, updates queued for clients, why
 * sessions ended, refused commands by reason, the memory budget; and the budgets of the lines
 * clients can cause: at most one per 10 s per kind (a close reason, a refusal reason), with the
 * count of the lines left out.
 */
final class WsMetrics {

  private final MeterRegistry registry;
  private final AtomicInteger sessions = new AtomicInteger();
  private final AtomicInteger subscriptions = new AtomicInteger();
  private final Counter updates;
  private final Map<WsSession.CloseReason, Counter> closed =
      new EnumMap<>(WsSession.CloseReason.class);
  private final Map<String, LogThrottle> logBudgets = new ConcurrentHashMap<>();

  WsMetrics(MeterRegistry registry) {
    this.registry = registry;
    registry.gauge("fieldline.ws.sessions", sessions);
    registry.gauge("fieldline.ws.subscriptions", subscriptions);
    this.updates =
        Counter.builder("fieldline.ws.updates")
            .description("Updates queued for WebSocket clients")
            .register(registry);
    for (WsSession.CloseReason reason : WsSession.CloseReason.values()) {
      closed.put(
          reason,
          Counter.builder("fieldline.ws.sessions.closed")
              .description("WebSocket sessions ended, by reason")
              .tag("reason", reason.name().toLowerCase(Locale.ROOT))
              .register(registry));
    }
  }

  /** Exposes the memory budget: {@code fieldline.ws.memory.used} and {@code .budget} (bytes). */
  void memory(WsMemory memory) {
    registry.gauge("fieldline.ws.memory.used", memory, WsMemory::used);
    registry.gauge("fieldline.ws.memory.budget", memory, WsMemory::limit);
  }

  void opened() {
    sessions.incrementAndGet();
  }

  void closed(WsSession.CloseReason reason) {
    sessions.decrementAndGet();
    // the EnumMap holds a counter for every reason, put in the constructor
    Objects.requireNonNull(closed.get(reason)).increment();
  }

  void subscriptionOpened() {
    subscriptions.incrementAndGet();
  }

  void subscriptionClosed() {
    subscriptions.decrementAndGet();
  }

  void subscriptionsClosed(int count) {
    subscriptions.addAndGet(-count);
  }

  void updateSent() {
    updates.increment();
  }

  /** A command refused; {@code reason} is a short tag (malformed, bad_command, …). */
  void rejected(String reason) {
    registry.counter("fieldline.ws.commands.rejected", "reason", reason).increment();
  }

  /**
   * Logs one line of {@code kind} at WARN (or INFO) unless a line of that kind went out less than
   * 10 s ago; {@code kind} is one of a fixed set of names (a close or refusal reason).
   */
  void log(Logger log, boolean warn, String kind, String format, Object... args) {
    long skipped = logBudgets.computeIfAbsent(kind, k -> new LogThrottle()).admit();
    if (skipped < 0) {
      return;
    }
    if (skipped > 0) {
      if (warn) {
        log.warn("[ws] ({} similar lines suppressed)", skipped);
      } else {
        log.info("[ws] ({} similar lines suppressed)", skipped);
      }
    }
    if (warn) {
      log.warn(format, args);
    } else {
      log.info(format, args);
    }
  }
}
