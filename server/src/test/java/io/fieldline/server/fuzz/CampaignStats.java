package io.fieldline.server.fuzz;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;

/**
 * What a fuzz campaign sent and how the server ended each lane, counted by name: {@code
 * executions}, {@code lanes}, {@code packets} and {@code fuzzed} (also per version and listener, as
 * {@code fuzzed.5.tls}), {@code outcome.<outcome>}, {@code lane-ms.<outcome>} (time spent in lanes
 * that ended so) and {@code connack.<version>.<code>}. Thread-safe.
 */
final class CampaignStats {

  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private volatile long started;

  void execution() {
    if (started == 0) {
      started = System.nanoTime();
    }
    add("executions", 1);
  }

  void record(LaneRunner.Result result) {
    Lane lane = result.lane();
    String where = lane.version().label() + "." + lane.listener().name().toLowerCase(Locale.ROOT);
    add("lanes", 1);
    add("lanes." + where, 1);
    add("packets", lane.packets());
    add("fuzzed", lane.fuzzedPackets());
    add("fuzzed." + where, lane.fuzzedPackets());
    add("outcome." + result.outcome().name().toLowerCase(Locale.ROOT), 1);
    add("lane-ms." + result.outcome().name().toLowerCase(Locale.ROOT), result.took().toMillis());
    if (result.connackCode() >= 0) {
      add(
          "connack." + lane.version().label() + ".0x" + Integer.toHexString(result.connackCode()),
          1);
    }
  }

  long get(String name) {
    LongAdder counter = counters.get(name);
    return counter == null ? 0 : counter.sum();
  }

  /** Seconds since the first execution. */
  double seconds() {
    long first = started;
    return first == 0 ? 0 : (System.nanoTime() - first) / 1e9;
  }

  /** Every counter, sorted by name. */
  Map<String, Long> snapshot() {
    return counters.entrySet().stream()
        .collect(
            Collectors.toMap(
                Map.Entry::getKey, e -> e.getValue().sum(), (a, b) -> a, TreeMap::new));
  }

  private void add(String name, long amount) {
    counters.computeIfAbsent(name, key -> new LongAdder()).add(amount);
  }
}
