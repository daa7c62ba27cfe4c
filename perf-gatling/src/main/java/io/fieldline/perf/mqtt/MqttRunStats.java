package io.fieldline.perf.mqtt;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.fieldline.perf.stats.PerSecond;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.AtomicHistogram;
import org.HdrHistogram.Histogram;

/**
 * Everything a run measures beyond Gatling's own report: PUBLISH→PUBACK latency in microseconds
 * (Gatling's timings have 1 ms resolution), the latency buckets of docs/performance.md,
 * acknowledgements per second, failures by kind, TLS handshake times and negotiated suites (over
 * TLS), and the {@link AckLedger} of every connection.
 *
 * <p>Shared by all event loops of a simulation: only atomic counters and lock-free histograms are
 * written during the run; the ledgers are read after it.
 */
public final class MqttRunStats {

  /** Why a request was KO. */
  public enum Failure {
    TIMEOUT,
    CLOSED,
    NOT_CONNECTED,
    WRITE_FAILED,
    REFUSED,
    NO_PACKET_ID,
    /** The TLS handshake failed or timed out (MQTT over TLS only). */
    HANDSHAKE
  }

  /** Upper bounds (exclusive, µs) of the latency buckets; the last bucket is open. */
  static final long[] BUCKET_BOUNDS_MICROS = {10_000, 50_000, 100_000, 250_000, 500_000, 1_000_000};

  public static final List<String> BUCKET_LABELS =
      List.of(
          "< 10 ms", "10-50 ms", "50-100 ms", "100-250 ms", "250-500 ms", "500 ms-1 s", "> 1 s");

  private static final long MAX_TRACKED_MICROS = 3_600_000_000L;
  private static final long SLOW_MICROS = 100_000;
  private static final int MAX_SECONDS = 6 * 3600;

  private final long startMillis = System.currentTimeMillis();

  /** When the first connection was attempted: second 0 of the per-second series. */
  private final AtomicLong originMillis = new AtomicLong();

  private final AtomicHistogram ackMicros = new AtomicHistogram(1, MAX_TRACKED_MICROS, 3);
  private final AtomicHistogram connectMicros = new AtomicHistogram(1, MAX_TRACKED_MICROS, 3);
  private final LongAdder[] buckets = new LongAdder[BUCKET_BOUNDS_MICROS.length + 1];

  /** The same, for acknowledgements inside the steady window only (see {@link #steadyWindow}). */
  private final AtomicHistogram steadyAckMicros = new AtomicHistogram(1, MAX_TRACKED_MICROS, 3);

  private final LongAdder[] steadyBuckets = new LongAdder[BUCKET_BOUNDS_MICROS.length + 1];
  private volatile int steadyFrom = Integer.MAX_VALUE;
  private volatile int steadyTo = Integer.MAX_VALUE;
  private final LongAdder sent = new LongAdder();
  private final LongAdder acked = new LongAdder();
  private final LongAdder connects = new LongAdder();
  private final LongAdder inbound = new LongAdder();
  private final EnumMap<Failure, LongAdder> failures = new EnumMap<>(Failure.class);
  private final AtomicLongArray ackedPerSecond = new AtomicLongArray(MAX_SECONDS);
  private final AtomicLongArray sentPerSecond = new AtomicLongArray(MAX_SECONDS);

  /** Acknowledgements that took 100 ms or more, per second: shows when the tail happened. */
  private final AtomicLongArray slowAckedPerSecond = new AtomicLongArray(MAX_SECONDS);

  private final ConcurrentLinkedQueue<AckLedger> ledgers = new ConcurrentLinkedQueue<>();

  /** Successful CONNACKs per second (reconnects included). */
  private final AtomicLongArray connectedPerSecond = new AtomicLongArray(MAX_SECONDS);

  /** Named windows besides the steady one (a cold start's first minute, before/after a drop). */
  private final List<Window> windows = new CopyOnWriteArrayList<>();

  /** Refused CONNACKs by return code ("0x03"). */
  private final Map<String, LongAdder> refusals = new ConcurrentHashMap<>();

  /** Connections closed by {@code drop()} (no DISCONNECT). */
  private final LongAdder drops = new LongAdder();

  /** Drop → first PUBACK of the device's next connection, one value per device that resumed. */
  private final AtomicHistogram resumeMillis = new AtomicHistogram(1, MAX_TRACKED_MICROS, 3);

  /** TCP connected → TLS handshake complete, per TLS connection (MQTT over TLS only). */
  private final AtomicHistogram handshakeMicros = new AtomicHistogram(1, MAX_TRACKED_MICROS, 3);

  /** RPC requests that reached a device with a responder ({@code respondToRpc()}). */
  private final LongAdder rpcRequested = new LongAdder();

  /** The same per second: the downlink rate of an RPC run. */
  private final AtomicLongArray rpcRequestedPerSecond = new AtomicLongArray(MAX_SECONDS);

  /** Answers written (QoS 0 and 1). */
  private final LongAdder rpcAnswered = new LongAdder();

  /** QoS 1 answers the broker acknowledged. */
  private final LongAdder rpcAnswerAcked = new LongAdder();

  /** Requests on a topic whose last level is no request id: not answered. */
  private final LongAdder rpcUnanswerable = new LongAdder();

  /** Completed TLS handshakes by negotiated protocol and cipher suite ("TLSv1.3 TLS_AES_…"). */
  private final Map<String, LongAdder> tlsSessions = new ConcurrentHashMap<>();

  /** Seconds {@code [from, to)} with their own PUBACK latency figures. */
  private record Window(
      String name, int from, int to, AtomicHistogram ackMicros, LongAdder[] buckets) {
    Window(String name, int from, int to) {
      this(name, from, to, new AtomicHistogram(1, MAX_TRACKED_MICROS, 3), newAdders());
    }
  }

  private static LongAdder[] newAdders() {
    LongAdder[] adders = new LongAdder[BUCKET_BOUNDS_MICROS.length + 1];
    for (int i = 0; i < adders.length; i++) {
      adders[i] = new LongAdder();
    }
    return adders;
  }

  public MqttRunStats() {
    for (int i = 0; i < buckets.length; i++) {
      buckets[i] = new LongAdder();
      steadyBuckets[i] = new LongAdder();
    }
    for (Failure failure : Failure.values()) {
      failures.put(failure, new LongAdder());
    }
  }

  /**
   * Seconds {@code [from, to)} (counted from the first connection attempt) whose acknowledgements
   * also go into the steady-window latency figures: all devices connected and warmed up, none
   * finished yet.
   */
  public void steadyWindow(int from, int to) {
    steadyFrom = from;
    steadyTo = to;
  }

  /**
   * Adds a named window of whole seconds {@code [from, to)} (counted from the first connection
   * attempt) whose acknowledgements get their own latency figures in the summary ({@code windows}),
   * next to the steady window. Call before the run.
   */
  public void window(String name, int from, int to) {
    windows.add(new Window(name, from, to));
  }

  void connecting() {
    if (originMillis.get() == 0) {
      originMillis.compareAndSet(0, System.currentTimeMillis());
    }
  }

  void register(AckLedger ledger) {
    ledgers.add(ledger);
  }

  void connected(long latencyNanos) {
    connects.increment();
    connectMicros.recordValue(clampMicros(latencyNanos));
    connectedPerSecond.incrementAndGet(secondIndex());
  }

  /**
   * A TLS handshake completed {@code latencyNanos} after the TCP connection, with {@code session}
   * ("TLSv1.3 TLS_AES_128_GCM_SHA256") negotiated.
   */
  void handshaken(long latencyNanos, String session) {
    handshakeMicros.recordValue(clampMicros(latencyNanos));
    tlsSessions.computeIfAbsent(session, s -> new LongAdder()).increment();
  }

  /** A CONNACK with a return code other than 0 ({@code code} is the byte, e.g. 3). */
  void refused(int code) {
    refusals.computeIfAbsent(String.format("0x%02x", code), c -> new LongAdder()).increment();
  }

  /** A connection closed without DISCONNECT by {@code drop()}. */
  void dropped() {
    drops.increment();
  }

  /** The first PUBACK of a connection opened after a drop, {@code millis} after that drop. */
  void resumed(long millis) {
    resumeMillis.recordValue(Math.max(1, Math.min(MAX_TRACKED_MICROS, millis)));
  }

  void sent() {
    sent.increment();
    sentPerSecond.incrementAndGet(secondIndex());
  }

  void acked(long latencyNanos) {
    long micros = clampMicros(latencyNanos);
    acked.increment();
    ackMicros.recordValue(micros);
    buckets[bucketOf(micros)].increment();
    int second = secondIndex();
    ackedPerSecond.incrementAndGet(second);
    if (second >= steadyFrom && second < steadyTo) {
      steadyAckMicros.recordValue(micros);
      steadyBuckets[bucketOf(micros)].increment();
    }
    for (Window window : windows) {
      if (second >= window.from() && second < window.to()) {
        window.ackMicros().recordValue(micros);
        window.buckets()[bucketOf(micros)].increment();
      }
    }
    if (micros >= SLOW_MICROS) {
      slowAckedPerSecond.incrementAndGet(second);
    }
  }

  void failed(Failure failure) {
    // the EnumMap holds an adder for every failure, put in the constructor
    Objects.requireNonNull(failures.get(failure)).increment();
  }

  void inbound() {
    inbound.increment();
  }

  void rpcRequested() {
    rpcRequested.increment();
    rpcRequestedPerSecond.incrementAndGet(secondIndex());
  }

  void rpcAnswered() {
    rpcAnswered.increment();
  }

  void rpcAnswerAcked() {
    rpcAnswerAcked.increment();
  }

  void rpcUnanswerable() {
    rpcUnanswerable.increment();
  }

  /** RPC requests received by responding devices so far. */
  public long rpcRequestedCount() {
    return rpcRequested.sum();
  }

  /** RPC answers written so far. */
  public long rpcAnsweredCount() {
    return rpcAnswered.sum();
  }

  static int bucketOf(long micros) {
    for (int i = 0; i < BUCKET_BOUNDS_MICROS.length; i++) {
      if (micros < BUCKET_BOUNDS_MICROS[i]) {
        return i;
      }
    }
    return BUCKET_BOUNDS_MICROS.length;
  }

  /**
   * Epoch ms of the first connection attempt (second 0 of the per-second series and windows), or of
   * this object's creation before any.
   */
  public long originEpochMillis() {
    long origin = originMillis.get();
    return origin == 0 ? startMillis : origin;
  }

  /** Acknowledged publishes so far. */
  public long ackedCount() {
    return acked.sum();
  }

  /** Publishes written so far (QoS 0 and 1). */
  public long sentCount() {
    return sent.sum();
  }

  /** Successful CONNACKs so far. */
  public long connectCount() {
    return connects.sum();
  }

  /** Failed requests of one kind so far. */
  public long failureCount(Failure failure) {
    // the EnumMap holds an adder for every failure, put in the constructor
    return Objects.requireNonNull(failures.get(failure)).sum();
  }

  /** Failed requests of every kind so far. */
  public long failureCount() {
    return failures.values().stream().mapToLong(LongAdder::sum).sum();
  }

  /** Writes one {@link AckLedger#toCsvLine()} per connection, after a header line. */
  public void writeLedger(Path file) {
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      out.write("username,baseTs,sent,ackedRanges\n");
      for (AckLedger ledger : ledgers) {
        out.write(ledger.toCsvLine());
        out.write('\n');
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The run's numbers as a JSON object, plus whatever the simulation adds in {@code extra}. */
  public void writeSummary(Path file, Map<String, Object> extra) {
    Map<String, Object> json = new LinkedHashMap<>(extra);
    json.put("startEpochMillis", originEpochMillis());
    json.put("endEpochMillis", System.currentTimeMillis());
    json.put("connects", connects.sum());
    json.put("sent", sent.sum());
    json.put("acked", acked.sum());
    Map<String, Long> ko = new LinkedHashMap<>();
    failures.forEach((failure, count) -> ko.put(failure.name().toLowerCase(), count.sum()));
    json.put("failures", ko);
    json.put("inbound", inbound.sum());
    json.put("ackLatencyMillis", percentiles(ackMicros.copy()));
    json.put("connectLatencyMillis", percentiles(connectMicros.copy()));
    json.put("tlsHandshakeLatencyMillis", percentiles(handshakeMicros.copy()));
    Map<String, Long> sessions = new TreeMap<>();
    tlsSessions.forEach((session, count) -> sessions.put(session, count.sum()));
    json.put("tlsSessions", sessions);
    Map<String, Long> bucketCounts = new LinkedHashMap<>();
    for (int i = 0; i < buckets.length; i++) {
      bucketCounts.put(BUCKET_LABELS.get(i), buckets[i].sum());
    }
    json.put("ackLatencyBuckets", bucketCounts);
    json.put("steadyAckLatencyMillis", percentiles(steadyAckMicros.copy()));
    Map<String, Long> steadyCounts = new LinkedHashMap<>();
    for (int i = 0; i < steadyBuckets.length; i++) {
      steadyCounts.put(BUCKET_LABELS.get(i), steadyBuckets[i].sum());
    }
    json.put("steadyAckLatencyBuckets", steadyCounts);
    json.put("ackedPerSecond", series(ackedPerSecond));
    json.put("sentPerSecond", series(sentPerSecond));
    json.put("slowAckedPerSecond", series(slowAckedPerSecond));
    json.put("connectedPerSecond", series(connectedPerSecond));
    Map<String, Object> named = new LinkedHashMap<>();
    for (Window window : windows) {
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("seconds", List.of(window.from(), window.to()));
      out.put("ackLatencyMillis", percentiles(window.ackMicros().copy()));
      out.put("ackLatencyBuckets", bucketCounts(window.buckets()));
      named.put(window.name(), out);
    }
    json.put("windows", named);
    Map<String, Long> refused = new TreeMap<>();
    refusals.forEach((code, count) -> refused.put(code, count.sum()));
    json.put("connackRefusals", refused);
    Map<String, Object> rpc = new LinkedHashMap<>();
    rpc.put("requested", rpcRequested.sum());
    rpc.put("answered", rpcAnswered.sum());
    rpc.put("answerAcked", rpcAnswerAcked.sum());
    rpc.put("unanswerable", rpcUnanswerable.sum());
    json.put("rpcResponder", rpc);
    json.put("rpcRequestedPerSecond", series(rpcRequestedPerSecond));
    json.put("drops", drops.sum());
    json.put("resumeAfterDropMillis", percentiles(resumeMillis.copy(), 1));
    try {
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<String, Object> percentiles(Histogram histogram) {
    return percentiles(histogram, 1000.0);
  }

  /** Count, mean and percentiles of a histogram, each value divided by {@code perMilli}. */
  private static Map<String, Object> percentiles(Histogram histogram, double perMilli) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("count", histogram.getTotalCount());
    if (histogram.getTotalCount() == 0) {
      return out;
    }
    out.put("mean", round(histogram.getMean() / perMilli));
    out.put("p50", round(histogram.getValueAtPercentile(50) / perMilli));
    out.put("p90", round(histogram.getValueAtPercentile(90) / perMilli));
    out.put("p95", round(histogram.getValueAtPercentile(95) / perMilli));
    out.put("p99", round(histogram.getValueAtPercentile(99) / perMilli));
    out.put("p999", round(histogram.getValueAtPercentile(99.9) / perMilli));
    out.put("max", round(histogram.getMaxValue() / perMilli));
    return out;
  }

  private static Map<String, Long> bucketCounts(LongAdder[] adders) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (int i = 0; i < adders.length; i++) {
      out.put(BUCKET_LABELS.get(i), adders[i].sum());
    }
    return out;
  }

  private static double round(double value) {
    return Math.round(value * 1000.0) / 1000.0;
  }

  private static List<Long> series(AtomicLongArray perSecond) {
    return PerSecond.series(perSecond);
  }

  /**
   * Mean acknowledgements per second over whole seconds {@code [from, to)} counted from the first
   * connection attempt.
   */
  public double meanAckedPerSecond(int from, int to) {
    return mean(ackedPerSecond, from, to);
  }

  /**
   * Mean RPC requests received by the devices per second (the downlink rate) over whole seconds
   * {@code [from, to)} counted from the first connection attempt.
   */
  public double meanRpcRequestedPerSecond(int from, int to) {
    return mean(rpcRequestedPerSecond, from, to);
  }

  private static double mean(AtomicLongArray perSecond, int from, int to) {
    return PerSecond.mean(perSecond, from, to);
  }

  private int secondIndex() {
    long origin = originMillis.get();
    long index = (System.currentTimeMillis() - (origin == 0 ? startMillis : origin)) / 1000;
    return (int) Math.max(0, Math.min(MAX_SECONDS - 1, index));
  }

  private static long clampMicros(long nanos) {
    return Math.max(1, Math.min(MAX_TRACKED_MICROS, nanos / 1000));
  }
}
