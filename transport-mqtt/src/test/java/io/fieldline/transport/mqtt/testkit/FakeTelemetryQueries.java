package io.fieldline.transport.mqtt.testkit;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.TelemetryQueries;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Attributes held in memory for transport tests; time series are always empty. Attribute reads can
 * be made to fail ({@link #failAttributes}), and every read is recorded ({@link #reads}).
 * Thread-safe.
 */
public final class FakeTelemetryQueries implements TelemetryQueries {

  /** One attribute read: the scope and the keys asked for (empty: all). */
  public record Read(DeviceId device, AttributeScope scope, Optional<Set<String>> keys) {}

  private final Map<DeviceId, Map<AttributeScope, Map<String, AttributeKvEntry>>> attributes =
      new ConcurrentHashMap<>();
  private final List<Read> reads = new CopyOnWriteArrayList<>();
  private volatile RuntimeException failure;

  /** From now on, attribute reads fail with {@code error} (null: they succeed again). */
  public void failAttributes(RuntimeException error) {
    failure = error;
  }

  public List<Read> reads() {
    return reads;
  }

  /** Stores an attribute value, replacing the key's previous value. */
  public void put(DeviceId device, AttributeScope scope, AttributeKvEntry entry) {
    attributes
        .computeIfAbsent(device, d -> new ConcurrentHashMap<>())
        .computeIfAbsent(scope, s -> new ConcurrentHashMap<>())
        .put(entry.key(), entry);
  }

  @Override
  public CompletionStage<List<String>> keys(DeviceId deviceId) {
    return CompletableFuture.completedFuture(List.of());
  }

  @Override
  public CompletionStage<List<TsKvEntry>> latest(DeviceId deviceId, Optional<Set<String>> keys) {
    return CompletableFuture.completedFuture(List.of());
  }

  @Override
  public CompletionStage<Map<String, List<TsKvEntry>>> history(
      DeviceId deviceId, HistoryQuery query) {
    return CompletableFuture.completedFuture(Map.of());
  }

  @Override
  public CompletionStage<List<AttributeKvEntry>> attributes(
      DeviceId deviceId, AttributeScope scope, Optional<Set<String>> keys) {
    reads.add(new Read(deviceId, scope, keys));
    RuntimeException error = failure;
    if (error != null) {
      return CompletableFuture.failedFuture(error);
    }
    Map<String, AttributeKvEntry> scoped =
        attributes.getOrDefault(deviceId, Map.of()).getOrDefault(scope, Map.of());
    return CompletableFuture.completedFuture(
        scoped.values().stream()
            .filter(entry -> keys.map(wanted -> wanted.contains(entry.key())).orElse(true))
            .sorted(Comparator.comparing(AttributeKvEntry::key))
            .toList());
  }
}
