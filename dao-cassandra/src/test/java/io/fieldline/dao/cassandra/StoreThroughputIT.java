package io.fieldline.dao.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TsKvEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A small throughput measurement (about 20 s): M devices send K-key messages as fast as the store
 * takes them, with the limiter at 1024 in flight; prints messages/s, rows/s and latency. For
 * comparison it also writes the same messages one statement per row (ThingsBoard's shape without
 * its partition-row write). The numbers go into docs/storage.md; the assertions only check that
 * nothing failed.
 */
class StoreThroughputIT extends CassandraTestBase {

  private static final int DEVICES = 200;
  private static final long WARMUP_MS = 4_000;
  private static final long RUN_MS = 4_000;

  private CassandraTelemetryStore store;
  private PreparedStatement insertTs;
  private PreparedStatement upsertLatest;
  private final List<DeviceId> devices = new ArrayList<>();

  @BeforeAll
  void createStore() {
    store = new CassandraTelemetryStore(session, config, WriteLimiter.from(config), registry);
    insertTs =
        session.prepare(
            "INSERT INTO " + keyspace + ".ts_kv (device_id, part, key, ts, dbl_v) VALUES (?, ?, ?, ?, ?)");
    upsertLatest =
        session.prepare(
            "INSERT INTO " + keyspace + ".ts_kv_latest (device_id, key, ts, dbl_v) VALUES (?, ?, ?, ?)"
                + " USING TIMESTAMP ?");
    for (int i = 0; i < DEVICES; i++) {
      devices.add(DeviceId.random());
    }
  }

  @Test
  void should_sustain_writes_without_failures_when_loaded() {
    run("warm-up, batched", 5, WARMUP_MS, 2048, store::writeTelemetry);
    List<String> report = new ArrayList<>();
    for (int keys : new int[] {1, 5, 10}) {
      report.add(
          run("batched (one unlogged batch per message)", keys, RUN_MS, 2048, store::writeTelemetry));
    }
    // About 1024 statements in flight, like the limiter allows the batched store.
    report.add(run("per-row statements (2 per value)", 5, RUN_MS, 1024 / 10, this::perRow));
    report.forEach(System.out::println);

    assertThat(counter(StoreMetrics.WRITE_FAILURES)).isZero();
  }

  private String run(
      String mode,
      int keys,
      long durationMs,
      int window,
      BiFunction<DeviceId, List<TsKvEntry>, CompletionStage<Void>> write) {
    Semaphore open = new Semaphore(window); // the transport's pause, in test form
    AtomicLong failures = new AtomicLong();
    List<Long> latencies = new ArrayList<>();
    long start = System.nanoTime();
    long end = start + durationMs * 1_000_000;
    long messages = 0;
    long ts = System.currentTimeMillis();
    while (System.nanoTime() < end) {
      open.acquireUninterruptibly();
      DeviceId device = devices.get((int) (messages % DEVICES));
      List<TsKvEntry> message = new ArrayList<>(keys);
      long messageTs = ts + messages / DEVICES;
      for (int k = 0; k < keys; k++) {
        message.add(new TsKvEntry(messageTs, KvEntry.of("key" + k, 20.0 + k)));
      }
      long sent = System.nanoTime();
      write.apply(device, message)
          .whenComplete(
              (ok, error) -> {
                if (error != null) {
                  failures.incrementAndGet();
                }
                synchronized (latencies) {
                  latencies.add(System.nanoTime() - sent);
                }
                open.release();
              });
      messages++;
    }
    open.acquireUninterruptibly(window);
    double seconds = (System.nanoTime() - start) / 1e9;
    long[] sorted;
    synchronized (latencies) {
      sorted = latencies.stream().mapToLong(Long::longValue).toArray();
    }
    Arrays.sort(sorted);
    assertThat(failures.get()).as(mode + " failures").isZero();
    return String.format(
        "%-45s K=%2d: %8.0f msg/s %9.0f rows/s  p50 %6.1f ms  p99 %6.1f ms  (%d messages)",
        mode,
        keys,
        messages / seconds,
        messages * keys / seconds,
        sorted[sorted.length / 2] / 1e6,
        sorted[(int) (sorted.length * 0.99)] / 1e6,
        messages);
  }

  private CompletionStage<Void> perRow(DeviceId device, List<TsKvEntry> message) {
    List<CompletableFuture<AsyncResultSet>> all = new ArrayList<>();
    for (TsKvEntry e : message) {
      double value = (Double) e.kv().value();
      long part = config.tsPartitioning().partitionOf(e.ts());
      all.add(
          session.executeAsync(insertTs.bind(device.value(), part, e.key(), e.ts(), value))
              .toCompletableFuture());
      all.add(
          session.executeAsync(
                  upsertLatest.bind(device.value(), e.key(), e.ts(), value, e.ts() * 1000))
              .toCompletableFuture());
    }
    return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]));
  }
}
