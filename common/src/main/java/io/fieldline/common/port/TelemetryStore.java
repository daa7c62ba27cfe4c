package io.fieldline.common.port;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * Durable storage of device values. A returned stage completes normally only when every row has
 * been written with the configured consistency; it fails with {@link StoreException} otherwise.
 * Writes are idempotent: writing the same (device, key, ts) again overwrites.
 */
public interface TelemetryStore {

  /** Writes time-series values and advances the device's latest values. */
  CompletionStage<Void> writeTelemetry(DeviceId deviceId, List<TsKvEntry> entries);

  /** Writes attributes of one scope, updated at {@code ts}. */
  CompletionStage<Void> writeAttributes(
      DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts);

  /** Reads the latest value of every time-series key of a device. */
  CompletionStage<List<TsKvEntry>> readLatest(DeviceId deviceId);

  /** Deletes attributes of one scope; keys that do not exist are ignored. */
  CompletionStage<Void> deleteAttributes(DeviceId deviceId, AttributeScope scope, Set<String> keys);

  /**
   * Deletes time-series values of {@code keys} with {@code startTs <= ts < endTs}. A key whose
   * latest value is deleted gets as latest value its newest remaining one when {@code
   * rewriteLatest}, none otherwise (ThingsBoard's {@code rewriteLatestIfDeleted}).
   */
  CompletionStage<Void> deleteTelemetry(
      DeviceId deviceId, Set<String> keys, long startTs, long endTs, boolean rewriteLatest);
}
