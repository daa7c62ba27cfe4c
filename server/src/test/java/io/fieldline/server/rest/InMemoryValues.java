package io.fieldline.server.rest;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.TelemetryQueries;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Attributes in maps, behind both ports the attribute and telemetry routes use. A test decides when
 * changes complete ({@link #gate}: a change is applied and its stage completes when the gate does)
 * and whether they fail ({@link #failure}); telemetry deletes are recorded, not applied.
 */
final class InMemoryValues implements TelemetryStore, TelemetryQueries {

  /** A recorded {@link #deleteTelemetry} call. */
  record TelemetryDelete(
      DeviceId device, Set<String> keys, long startTs, long endTs, boolean rewriteLatest) {}

  private final Map<DeviceId, Map<AttributeScope, ConcurrentSkipListMap<String, AttributeKvEntry>>>
      attributes = new ConcurrentHashMap<>();
  final List<TelemetryDelete> telemetryDeletes = new CopyOnWriteArrayList<>();
  // Every history read, as asked (answered with no values).
  final List<HistoryQuery> historyQueries = new CopyOnWriteArrayList<>();
  volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);
  volatile RuntimeException failure;

  void reset() {
    attributes.clear();
    telemetryDeletes.clear();
    historyQueries.clear();
    gate = CompletableFuture.completedFuture(null);
    failure = null;
  }

  /**
   * {@link TelemetryRoutes} over these values and {@code devices}, as user "admin", with small
   * query limits (100 keys, 100,000 points, 700 buckets, 366 days) and no dead letters.
   */
  Route telemetryRoutes(InMemoryDevices devices) {
    return new TelemetryRoutes(
            this,
            this,
            devices,
            (id, limit) -> null,
            new RestConfig.QueryLimits(100, 100_000, 700, Duration.ofDays(366)))
        .routes("admin");
  }

  @Override
  public CompletionStage<Void> writeAttributes(
      DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
    return change(
        () ->
            entries.forEach(
                kv -> scope(deviceId, scope).put(kv.key(), new AttributeKvEntry(ts, kv))));
  }

  @Override
  public CompletionStage<Void> deleteAttributes(
      DeviceId deviceId, AttributeScope scope, Set<String> keys) {
    return change(() -> scope(deviceId, scope).keySet().removeAll(keys));
  }

  @Override
  public CompletionStage<Void> deleteTelemetry(
      DeviceId deviceId, Set<String> keys, long startTs, long endTs, boolean rewriteLatest) {
    return change(
        () ->
            telemetryDeletes.add(
                new TelemetryDelete(deviceId, Set.copyOf(keys), startTs, endTs, rewriteLatest)));
  }

  @Override
  public CompletionStage<List<AttributeKvEntry>> attributes(
      DeviceId deviceId, AttributeScope scope, Optional<Set<String>> keys) {
    List<AttributeKvEntry> found = new ArrayList<>();
    for (AttributeKvEntry entry : scope(deviceId, scope).values()) {
      if (keys.isEmpty() || keys.get().contains(entry.key())) {
        found.add(entry);
      }
    }
    return CompletableFuture.completedFuture(found);
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
    historyQueries.add(query);
    return CompletableFuture.completedFuture(Map.of());
  }

  @Override
  public CompletionStage<Void> writeTelemetry(DeviceId deviceId, List<TsKvEntry> entries) {
    throw new UnsupportedOperationException("writeTelemetry");
  }

  @Override
  public CompletionStage<List<TsKvEntry>> readLatest(DeviceId deviceId) {
    throw new UnsupportedOperationException("readLatest");
  }

  private CompletionStage<Void> change(Runnable apply) {
    RuntimeException failing = failure;
    if (failing != null) {
      return CompletableFuture.failedFuture(failing);
    }
    return gate.thenRun(apply);
  }

  private ConcurrentSkipListMap<String, AttributeKvEntry> scope(
      DeviceId device, AttributeScope scope) {
    return attributes
        .computeIfAbsent(device, d -> new ConcurrentHashMap<>())
        .computeIfAbsent(scope, s -> new ConcurrentSkipListMap<>());
  }
}
