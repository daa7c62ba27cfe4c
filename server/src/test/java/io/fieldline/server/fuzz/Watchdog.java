package io.fieldline.server.fuzz;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * Watches the server while the fuzzer runs: a {@link Probe} every second, on the plain and the TLS
 * listener in turn (new connections rotate over the event loops, so over time every loop is
 * probed), and the heap after GC every minute for the report. Keeps the first failed probe. Its own
 * thread; the accessors are thread-safe.
 */
final class Watchdog implements AutoCloseable {

  private static final Duration PROBE_EVERY = Duration.ofSeconds(1);
  private static final Duration HEAP_EVERY = Duration.ofMinutes(1);

  private final LiveServer server;
  private final String probeToken;
  private final Duration bound;
  private final CampaignReport report;
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicReference<String> failure = new AtomicReference<>();
  private final ScheduledExecutorService scheduler =
      Executors.newSingleThreadScheduledExecutor(
          task -> {
            Thread thread = new Thread(task, "fuzz-watchdog");
            thread.setDaemon(true);
            return thread;
          });
  private long probes;

  Watchdog(LiveServer server, String probeToken, Duration bound, CampaignReport report) {
    this.server = server;
    this.probeToken = probeToken;
    this.bound = bound;
    this.report = report;
  }

  /**
   * Starts probing, the first time only: from inside the first fuzz execution, once the fuzz test
   * has allowed connections to 127.0.0.1.
   *
   * @return whether this call started it
   */
  boolean startOnce() {
    if (!started.compareAndSet(false, true)) {
      return false;
    }
    scheduler.scheduleWithFixedDelay(this::probe, 0, PROBE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    scheduler.scheduleWithFixedDelay(
        report::sampleHeap, HEAP_EVERY.toMillis(), HEAP_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    return true;
  }

  private void probe() {
    if (failure.get() != null) {
      return;
    }
    boolean tls = probes++ % 2 == 1;
    try {
      report.probed(
          Probe.roundTrip(
              tls ? server.tls() : server.plain(),
              tls ? server.clientTls() : null,
              "fuzz-probe",
              probeToken,
              bound));
    } catch (AssertionError e) {
      failure.compareAndSet(
          null, e.getMessage() + (e.getCause() == null ? "" : ": " + e.getCause()));
    }
  }

  /** The first probe that failed, or null. */
  @Nullable String failure() {
    return failure.get();
  }

  /** Stops probing; waits for a probe under way. */
  @Override
  public void close() {
    scheduler.shutdown();
    try {
      scheduler.awaitTermination(bound.toMillis() * 2, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
