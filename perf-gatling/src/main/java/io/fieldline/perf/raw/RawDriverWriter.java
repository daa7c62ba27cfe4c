package io.fieldline.perf.raw;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fieldline.perf.CommandLine;
import io.fieldline.perf.Cql;
import io.fieldline.perf.telemetry.TelemetryPayload;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.AtomicHistogram;
import org.HdrHistogram.Histogram;

/**
 * The storage ceiling of a scenario: the same {@code ts_kv} rows Fieldline would store (N devices,
 * K keys per message, device timestamps, month partitions, unset unused value columns) written
 * straight through the driver, asynchronously, with a bound on requests in flight, into a copy of
 * the table in its own keyspace on the same Cassandra.
 *
 * <p>Modes: {@code rows} = one INSERT per row (what a server that forwards one insert per data
 * point costs); {@code batch} = one UNLOGGED batch per message holding its K {@code ts_kv} rows
 * (the shape of a Fieldline message once its key index rows are written). Rate: {@code --rate}
 * messages per second per device (open loop, paced; it falls behind when the bound is reached), or
 * 0 for as fast as the in-flight bound allows (closed loop). The first {@code --warmup} seconds are
 * written but not counted.
 *
 * <pre>
 * java -cp ... io.fieldline.perf.raw.RawDriverWriter --cql 127.0.0.1:9042 --devices 2000 \
 *   --rate 1 --duration 60 --keys 4 --mode rows --inflight 1024 --out raw.json
 * </pre>
 */
public final class RawDriverWriter {

  private static final int MAX_SECONDS = 6 * 3600;

  private final CqlSession session;
  private final String keyspace;
  private final int devices;
  private final double ratePerDevice;
  private final Duration warmup;
  private final Duration duration;
  private final int keys;
  private final boolean batch;
  private final Semaphore inFlight;
  private final int maxInFlight;
  private final List<UUID> deviceIds = new ArrayList<>();
  private final LongAdder rowsOk = new LongAdder();
  private final LongAdder requestsFailed = new LongAdder();
  private final AtomicLongArray rowsPerSecond = new AtomicLongArray(MAX_SECONDS);
  private final AtomicHistogram latencyMicros = new AtomicHistogram(1, 3_600_000_000L, 3);
  private final PreparedStatement insertTs;
  private long originNanos;
  private volatile String firstError = "";

  RawDriverWriter(CqlSession session, CommandLine line) {
    this.session = session;
    this.keyspace = line.get("keyspace", "fieldline_raw");
    this.devices = line.getInt("devices", 1000);
    this.ratePerDevice = line.getDouble("rate", 1);
    this.warmup = Duration.ofSeconds(line.getLong("warmup", 10));
    this.duration = Duration.ofSeconds(line.getLong("duration", 60));
    this.keys = line.getInt("keys", 4);
    this.batch = line.get("mode", "rows").equals("batch");
    this.maxInFlight = line.getInt("inflight", 1024);
    this.inFlight = new Semaphore(maxInFlight);
    if (!line.get("mode", "rows").matches("rows|batch")) {
      throw new IllegalArgumentException("--mode must be rows or batch");
    }
    this.insertTs = createSchema(session, keyspace);
  }

  public static void main(String[] args) throws Exception {
    CommandLine line = CommandLine.parse(args);
    try (CqlSession session = Cql.open(line.get("cql"))) {
      RawDriverWriter writer = new RawDriverWriter(session, line);
      Map<String, Object> result = writer.run();
      String out = line.optional("out");
      if (out != null) {
        new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .writeValue(Path.of(out).toFile(), result);
      }
      System.out.printf("raw writer: %s%n", result.get("summary"));
    }
  }

  /** Creates the keyspace and a copy of Fieldline's ts_kv; returns the prepared insert. */
  private static PreparedStatement createSchema(CqlSession session, String keyspace) {
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS "
            + keyspace
            + " WITH replication = {'class':'SimpleStrategy','replication_factor':1}");
    session.execute(
        "CREATE TABLE IF NOT EXISTS "
            + keyspace
            + ".ts_kv ( device_id uuid, part bigint, key text, ts bigint, bool_v boolean, long_v"
            + " bigint, dbl_v double, str_v text, json_v text, PRIMARY KEY ((device_id, part), key,"
            + " ts)) WITH CLUSTERING ORDER BY (key ASC, ts DESC)");
    return session.prepare(
        "INSERT INTO "
            + keyspace
            + ".ts_kv (device_id, part, key, ts, long_v, dbl_v)"
            + " VALUES (?, ?, ?, ?, ?, ?)");
  }

  Map<String, Object> run() throws InterruptedException {
    for (int i = 0; i < devices; i++) {
      deviceIds.add(UUID.randomUUID());
    }
    long baseTs = System.currentTimeMillis();
    double totalRate = ratePerDevice * devices;
    long total = warmup.plus(duration).toNanos();
    originNanos = System.nanoTime();
    long startEpochMillis = System.currentTimeMillis();
    long messages = 0;
    while (true) {
      long elapsed = System.nanoTime() - originNanos;
      if (elapsed >= total) {
        break;
      }
      long due = ratePerDevice > 0 ? (long) (elapsed / 1e9 * totalRate) : Long.MAX_VALUE;
      if (messages >= due) {
        LockSupport.parkNanos(200_000);
        continue;
      }
      int device = (int) (messages % devices);
      long sequence = messages / devices;
      write(deviceIds.get(device), baseTs + sequence, device, sequence);
      messages++;
    }
    if (!inFlight.tryAcquire(maxInFlight, 120, TimeUnit.SECONDS)) {
      throw new IllegalStateException("writes still in flight after 120 s");
    }
    return result(messages, startEpochMillis);
  }

  private void write(UUID device, long ts, int user, long sequence) throws InterruptedException {
    long part = monthOf(ts);
    List<BoundStatement> rows = new ArrayList<>(keys);
    for (int k = 0; k < keys; k++) {
      String key = TelemetryPayload.KEYS.get(k);
      long mix = user * 31L + sequence + k;
      boolean integral = k >= 3;
      rows.add(
          bind(
                  insertTs
                      .boundStatementBuilder()
                      .setUuid(0, device)
                      .setLong(1, part)
                      .setString(2, key)
                      .setLong(3, ts),
                  4,
                  integral,
                  mix)
              .build());
    }
    if (batch) {
      BatchStatementBuilder builder = BatchStatement.builder(BatchType.UNLOGGED);
      rows.forEach(builder::addStatement);
      send(
          builder.setIdempotence(true).setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM).build(),
          keys);
    } else {
      for (BoundStatement row : rows) {
        send(row.setIdempotent(true).setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM), 1);
      }
    }
  }

  private static com.datastax.oss.driver.api.core.cql.BoundStatementBuilder bind(
      com.datastax.oss.driver.api.core.cql.BoundStatementBuilder builder,
      int firstValue,
      boolean integral,
      long mix) {
    // Only the column of the value's type is set; the other stays unset (no tombstone).
    return integral
        ? builder.setLong(firstValue, 100 - mix % 100)
        : builder.setDouble(firstValue + 1, 15 + (mix % 1500) / 100.0);
  }

  private void send(Statement<?> statement, int rows) throws InterruptedException {
    inFlight.acquire();
    long start = System.nanoTime();
    session
        .executeAsync(statement)
        .whenComplete(
            (result, error) -> {
              long now = System.nanoTime();
              inFlight.release();
              if (error != null) {
                requestsFailed.increment();
                if (firstError.isEmpty()) {
                  firstError = String.valueOf(error);
                }
                return;
              }
              latencyMicros.recordValue(
                  Math.max(1, Math.min(3_600_000_000L, (now - start) / 1000)));
              rowsOk.add(rows);
              int second = (int) Math.min(MAX_SECONDS - 1, (now - originNanos) / 1_000_000_000L);
              rowsPerSecond.addAndGet(second, rows);
            });
  }

  private Map<String, Object> result(long messages, long startEpochMillis) {
    int from = (int) warmup.toSeconds();
    int to = (int) warmup.plus(duration).toSeconds() - 1;
    long windowRows = 0;
    for (int s = from; s < to; s++) {
      windowRows += rowsPerSecond.get(s);
    }
    double rowsPerSec = to > from ? windowRows / (double) (to - from) : 0;
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("mode", batch ? "batch" : "rows");
    out.put("devices", devices);
    out.put("ratePerDevice", ratePerDevice);
    out.put("offeredMessagesPerSecond", ratePerDevice > 0 ? ratePerDevice * devices : 0);
    out.put("keys", keys);
    out.put("inflight", maxInFlight);
    out.put("warmupSeconds", warmup.toSeconds());
    out.put("durationSeconds", duration.toSeconds());
    out.put("startEpochMillis", startEpochMillis);
    out.put("steadyWindowSeconds", List.of(from, to));
    out.put("messagesIssued", messages);
    out.put("rowsWritten", rowsOk.sum());
    out.put("requestsFailed", requestsFailed.sum());
    out.put("firstError", firstError);
    out.put("steadyRowsPerSecond", Math.round(rowsPerSec * 10) / 10.0);
    out.put("steadyMessagesPerSecond", Math.round(rowsPerSec / keys * 10) / 10.0);
    Histogram latency = latencyMicros.copy();
    Map<String, Object> millis = new LinkedHashMap<>();
    for (double p : new double[] {50, 95, 99, 99.9}) {
      millis.put(
          "p" + (p == 99.9 ? "999" : String.valueOf((int) p)),
          latency.getValueAtPercentile(p) / 1000.0);
    }
    millis.put("max", latency.getMaxValue() / 1000.0);
    out.put("requestLatencyMillis", millis);
    List<Long> series = new ArrayList<>();
    for (int s = 0; s <= to; s++) {
      series.add(rowsPerSecond.get(s));
    }
    out.put("rowsPerSecond", series);
    out.put(
        "summary",
        String.format(
            "%s mode: %.0f rows/s (%.0f msgs/s) in the window, %d failed",
            batch ? "batch" : "rows", rowsPerSec, rowsPerSec / keys, requestsFailed.sum()));
    return out;
  }

  private static long monthOf(long ts) {
    ZonedDateTime utc = Instant.ofEpochMilli(ts).atZone(ZoneOffset.UTC);
    return utc.withDayOfMonth(1).truncatedTo(ChronoUnit.DAYS).toInstant().toEpochMilli();
  }
}
