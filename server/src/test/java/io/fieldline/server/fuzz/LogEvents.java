package io.fieldline.server.fuzz;

import io.micrometer.core.instrument.binder.logging.LogbackMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * Counts the log events of this JVM by level while the campaign runs (Micrometer's Logback binder),
 * so that the test reads a counter instead of matching log text. An ERROR means a bug: the
 * transport's last pipeline stage logs every unexpected exception at ERROR (nothing reaches Netty's
 * own end of the pipeline after it), and Netty's leak detector reports at ERROR. WARNs are
 * reported, not judged: the transport warns (rate-limited) about the bad input itself. Thread-safe.
 */
final class LogEvents implements AutoCloseable {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final LogbackMetrics binder = new LogbackMetrics();

  /** Starts counting. */
  static LogEvents count() {
    LogEvents events = new LogEvents();
    events.binder.bindTo(events.registry);
    return events;
  }

  long errors() {
    return count("error");
  }

  long warnings() {
    return count("warn");
  }

  private long count(String level) {
    return (long) registry.counter("logback.events", "level", level).count();
  }

  @Override
  public void close() {
    binder.close();
    registry.close();
  }
}
