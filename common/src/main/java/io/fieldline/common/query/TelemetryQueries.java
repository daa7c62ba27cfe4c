package io.fieldline.common.query;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The read side of device values, as the REST API serves them with ThingsBoard's semantics: the
 * time-series keys of a device, their latest values, their history (raw or aggregated, see {@link
 * HistoryQuery}), and attributes. The write side is {@link TelemetryStore}.
 *
 * <p>Every method is asynchronous and never blocks the caller; stages fail with {@link
 * StoreException} when storage cannot answer, and with {@link ReadRefusedException} when the read
 * was refused because the node's read budget is spent (nothing was read; retry later). Results are
 * sorted by key.
 */
public interface TelemetryQueries {

  /** The device's time-series keys, sorted. */
  CompletionStage<List<String>> keys(DeviceId deviceId);

  /** Latest values of the given keys (every key when empty), sorted by key. */
  CompletionStage<List<TsKvEntry>> latest(DeviceId deviceId, Optional<Set<String>> keys);

  /**
   * Values of each key of the query with {@code startTs <= ts < endTs}, raw or aggregated, in the
   * query's order. Keys without values are absent from the map, which is sorted by key.
   */
  CompletionStage<Map<String, List<TsKvEntry>>> history(DeviceId deviceId, HistoryQuery query);

  /** Attributes of one scope, all of them or the given keys, sorted by key. */
  CompletionStage<List<AttributeKvEntry>> attributes(
      DeviceId deviceId, AttributeScope scope, Optional<Set<String>> keys);

  /**
   * The same reads on behalf of {@code user} (a logged-in user's name, the JWT subject): besides
   * the node's read budget, they count against that user's own share of it, so that one user's
   * concurrent reads are bounded whatever front-end they come through (REST, WebSocket). An
   * implementation without per-user bounds returns itself.
   */
  default TelemetryQueries forUser(String user) {
    return this;
  }
}
