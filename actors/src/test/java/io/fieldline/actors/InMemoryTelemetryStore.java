package io.fieldline.actors;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A {@link TelemetryStore} whose results the test decides: every write stays pending until the test
 * calls {@link #succeed} or {@link #fail}; reads answer at once from what succeeded so far, or stay
 * pending while {@link #holdReads} is on. Thread-safe (the actors call it, the test inspects it).
 */
final class InMemoryTelemetryStore implements TelemetryStore {

  /**
   * One write call.
   *
   * @param scope null for time series, the scope for attributes
   * @param entries {@link TsKvEntry} for time series, {@link KvEntry} for attributes
   */
  record Write(
      DeviceId deviceId,
      @Nullable AttributeScope scope,
      List<?> entries,
      long ts,
      CompletableFuture<Void> result) {}

  private final List<Write> writes = new ArrayList<>();
  private final List<CompletableFuture<List<TsKvEntry>>> pendingReads = new ArrayList<>();
  private final Map<DeviceId, Map<String, TsKvEntry>> stored = new HashMap<>();
  private final Map<DeviceId, AtomicInteger> reads = new ConcurrentHashMap<>();
  private boolean holdReads;

  @Override
  public synchronized CompletionStage<Void> writeTelemetry(
      DeviceId deviceId, List<TsKvEntry> entries) {
    Write write = new Write(deviceId, null, entries, 0, new CompletableFuture<>());
    writes.add(write);
    return write.result();
  }

  @Override
  public synchronized CompletionStage<Void> writeAttributes(
      DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
    Write write = new Write(deviceId, scope, entries, ts, new CompletableFuture<>());
    writes.add(write);
    return write.result();
  }

  @Override
  public CompletionStage<Void> deleteAttributes(
      DeviceId deviceId, io.fieldline.common.kv.AttributeScope scope, java.util.Set<String> keys) {
    throw new UnsupportedOperationException("deleteAttributes");
  }

  @Override
  public CompletionStage<Void> deleteTelemetry(
      DeviceId deviceId,
      java.util.Set<String> keys,
      long startTs,
      long endTs,
      boolean rewriteLatest) {
    throw new UnsupportedOperationException("deleteTelemetry");
  }

  @Override
  public synchronized CompletionStage<List<TsKvEntry>> readLatest(DeviceId deviceId) {
    reads.computeIfAbsent(deviceId, id -> new AtomicInteger()).incrementAndGet();
    if (holdReads) {
      CompletableFuture<List<TsKvEntry>> read = new CompletableFuture<>();
      pendingReads.add(read);
      return read;
    }
    return CompletableFuture.completedFuture(
        List.copyOf(stored.getOrDefault(deviceId, Map.of()).values()));
  }

  /** Makes later reads stay pending until {@link #completeRead} or {@link #failRead}. */
  synchronized void holdReads() {
    holdReads = true;
  }

  /** Answers the oldest pending read; {@code values} may hold nulls to make the reader throw. */
  void completeRead(List<TsKvEntry> values) {
    nextRead().complete(values);
  }

  void failRead(Throwable failure) {
    nextRead().completeExceptionally(failure);
  }

  synchronized int pendingReads() {
    return pendingReads.size();
  }

  private synchronized CompletableFuture<List<TsKvEntry>> nextRead() {
    return pendingReads.remove(0);
  }

  int reads(DeviceId deviceId) {
    AtomicInteger count = reads.get(deviceId);
    return count == null ? 0 : count.get();
  }

  synchronized int writeCount() {
    return writes.size();
  }

  synchronized Write write(int index) {
    return writes.get(index);
  }

  /** The first write of {@code deviceId}. */
  synchronized Write firstWriteOf(DeviceId deviceId) {
    return writes.stream().filter(w -> w.deviceId().equals(deviceId)).findFirst().orElseThrow();
  }

  /** Stores the write (later reads see its values) and completes it successfully. */
  void succeed(Write write) {
    if (write.scope() == null) {
      synchronized (this) {
        Map<String, TsKvEntry> latest =
            stored.computeIfAbsent(write.deviceId(), id -> new HashMap<>());
        for (Object entry : write.entries()) {
          TsKvEntry value = (TsKvEntry) entry;
          latest.merge(value.key(), value, (old, next) -> next.ts() >= old.ts() ? next : old);
        }
      }
    }
    write.result().complete(null);
  }

  void fail(Write write, StoreException.Kind kind) {
    write.result().completeExceptionally(new StoreException(kind, "injected " + kind));
  }
}
