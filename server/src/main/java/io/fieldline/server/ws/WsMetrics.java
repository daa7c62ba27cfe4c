package io.fieldline.server.ws;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The WebSocket API's meters: open sessions and subscriptions, updates queued for clients, why
 * sessions ended, and refused commands by reason.
 */
final class WsMetrics {

  private final MeterRegistry registry;
  private final AtomicInteger sessions = new AtomicInteger();
  private final AtomicInteger subscriptions = new AtomicInteger();
  private final Counter updates;
  private final Map<WsSession.CloseReason, Counter> closed =
      new EnumMap<>(WsSession.CloseReason.class);

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

  void opened() {
    sessions.incrementAndGet();
  }

  void closed(WsSession.CloseReason reason) {
    sessions.decrementAndGet();
    closed.get(reason).increment();
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
}
