package io.fieldline.dao.cassandra.telemetry.write;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * A small throughput measurement (about 18 s) on the shared test node: 200 devices send K-key
 * messages as fast as the store takes them, the limiter at 1024 in flight; prints messages/s,
 * rows/s and latency, and the same load written one statement per row (ThingsBoard's shape without
 * its partition-row write) for comparison. The longer, steadier run on a server-profile node is
 * {@link StoreBenchmark}. Asserts only that nothing failed.
 */
class StoreThroughputIT extends CassandraTestBase {

  @Test
  void should_sustain_writes_without_failures_when_loaded() {
    CassandraTelemetryStore store =
        new CassandraTelemetryStore(session, config, WriteLimiter.from(config), registry);
    List<LoadGenerator.Result> results =
        measure(new LoadGenerator(200), store, new PerRowWriter(session, config), 3_000, 3_000);
    results.forEach(System.out::println);

    assertThat(results).allSatisfy(r -> assertThat(r.failures()).isZero());
    assertThat(counter(StoreMetrics.WRITE_FAILURES)).isZero();
  }

  /**
   * Warm-up, then the batched store at K = 1, 5, 10 (2048 messages outstanding: the limiter's 1024
   * in flight plus queue), K = 5 with 256 outstanding, then per-row statements at K = 5.
   */
  static List<LoadGenerator.Result> measure(
      LoadGenerator load,
      CassandraTelemetryStore store,
      PerRowWriter perRow,
      long warmupMs,
      long runMs) {
    List<LoadGenerator.Result> results = new ArrayList<>();
    load.run("warm-up", 5, warmupMs, 2048, store::writeTelemetry);
    for (int keys : new int[] {1, 5, 10}) {
      results.add(
          load.run("batched: one batch per message", keys, runMs, 2048, store::writeTelemetry));
    }
    // Fewer messages outstanding: less queueing latency, how much throughput is lost?
    results.add(
        load.run("batched, 256 messages outstanding", 5, runMs, 256, store::writeTelemetry));
    // About 1024 statements in flight, as many requests as the limiter lets the store run.
    results.add(load.run("per-row: 2 statements per value", 5, runMs, 1024 / 10, perRow::write));
    return results;
  }

  /** Writes each value as its own ts_kv insert plus ts_kv_latest upsert, no batch, no limiter. */
  static final class PerRowWriter {
    private final CqlSession session;
    private final CassandraConfig config;
    private final PreparedStatement insertTs;
    private final PreparedStatement upsertLatest;

    PerRowWriter(CqlSession session, CassandraConfig config) {
      this.session = session;
      this.config = config;
      String ks = config.keyspace();
      insertTs =
          session.prepare(
              "INSERT INTO "
                  + ks
                  + ".ts_kv (device_id, part, key, ts, dbl_v) VALUES (?, ?, ?, ?, ?)");
      upsertLatest =
          session.prepare(
              "INSERT INTO "
                  + ks
                  + ".ts_kv_latest (device_id, key, ts, dbl_v) VALUES (?, ?, ?, ?)"
                  + " USING TIMESTAMP ?");
    }

    CompletionStage<Void> write(DeviceId device, List<TsKvEntry> message) {
      List<CompletableFuture<AsyncResultSet>> all = new ArrayList<>();
      for (TsKvEntry e : message) {
        double value = (Double) e.kv().value();
        long part = config.tsPartitioning().partitionOf(e.ts());
        all.add(
            session
                .executeAsync(insertTs.bind(device.value(), part, e.key(), e.ts(), value))
                .toCompletableFuture());
        all.add(
            session
                .executeAsync(
                    upsertLatest.bind(device.value(), e.key(), e.ts(), value, e.ts() * 1000))
                .toCompletableFuture());
      }
      return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]));
    }
  }
}
