package io.fieldline.dao.cassandra.telemetry.write;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;

/**
 * Test-side load: {@code devices} devices send K-key telemetry messages (doubles, one timestamp per
 * message, each device's timestamps increasing) as fast as the write function takes them, with at
 * most {@code window} messages outstanding (the transport's socket pause, in test form). Used by
 * {@link StoreThroughputIT} and {@link StoreBenchmark}. Confined to the calling thread, except the
 * completion callbacks.
 */
final class LoadGenerator {

  /**
   * What one run achieved.
   *
   * @param messages messages completed
   * @param failures messages that failed
   */
  record Result(
      String mode,
      int keys,
      long messages,
      long failures,
      double seconds,
      double p50Ms,
      double p99Ms) {

    double messagesPerSecond() {
      return messages / seconds;
    }

    double rowsPerSecond() {
      return messages * keys / seconds;
    }

    @Override
    public String toString() {
      return String.format(
          "%-42s K=%2d: %8.0f msg/s %9.0f rows/s  p50 %6.1f ms  p99 %6.1f ms  (%d messages, %d"
              + " failed)",
          mode, keys, messagesPerSecond(), rowsPerSecond(), p50Ms, p99Ms, messages, failures);
    }
  }

  private final List<DeviceId> devices = new ArrayList<>();
  private long clock = System.currentTimeMillis();

  LoadGenerator(int deviceCount) {
    for (int i = 0; i < deviceCount; i++) {
      devices.add(DeviceId.random());
    }
  }

  Result run(
      String mode,
      int keys,
      long durationMs,
      int window,
      BiFunction<DeviceId, List<TsKvEntry>, CompletionStage<Void>> write) {
    Semaphore open = new Semaphore(window);
    AtomicLong failures = new AtomicLong();
    long[] latencies = new long[1 << 22];
    AtomicLong recorded = new AtomicLong();
    long start = System.nanoTime();
    long end = start + durationMs * 1_000_000;
    long messages = 0;
    while (System.nanoTime() < end) {
      open.acquireUninterruptibly();
      DeviceId device = devices.get((int) (messages % devices.size()));
      if (messages % devices.size() == 0) {
        clock++;
      }
      List<TsKvEntry> message = new ArrayList<>(keys);
      for (int k = 0; k < keys; k++) {
        message.add(new TsKvEntry(clock, KvEntry.of("key" + k, 20.0 + k)));
      }
      long sent = System.nanoTime();
      write
          .apply(device, message)
          .whenComplete(
              (ok, error) -> {
                if (error != null) {
                  failures.incrementAndGet();
                }
                long slot = recorded.getAndIncrement();
                if (slot < latencies.length) {
                  latencies[(int) slot] = System.nanoTime() - sent;
                }
                open.release();
              });
      messages++;
    }
    open.acquireUninterruptibly(window);
    double seconds = (System.nanoTime() - start) / 1e9;
    long[] sorted = Arrays.copyOf(latencies, (int) Math.min(recorded.get(), latencies.length));
    Arrays.sort(sorted);
    return new Result(
        mode,
        keys,
        messages,
        failures.get(),
        seconds,
        sorted[sorted.length / 2] / 1e6,
        sorted[(int) (sorted.length * 0.99)] / 1e6);
  }
}
