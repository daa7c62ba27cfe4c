package io.fieldline.export;

import io.fieldline.common.DeviceId;
import io.fieldline.common.feed.FeedCursor;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.feed.FeedStore;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/** This process's log and the feed store, in memory. */
final class MemoryFeed implements FeedStore, LocalFeed {
  final UUID own = UUID.randomUUID();
  final UUID process = UUID.randomUUID();
  final List<FeedLog> logs = new CopyOnWriteArrayList<>();
  final Map<UUID, List<FeedEntry>> entries = new ConcurrentHashMap<>();
  final Map<String, FeedCursor> cursors = new ConcurrentHashMap<>();
  final Set<UUID> retired = ConcurrentHashMap.newKeySet();
  final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  long next = 1;
  long settled;
  long lastSeq;
  volatile long leasedUntil;

  /** Reads of entries after this position wait for {@link #gate}. */
  volatile long gatedAfter = Long.MAX_VALUE;

  final CompletableFuture<Void> gate = new CompletableFuture<>();

  /** The key of a cursor in {@link #cursors}. */
  static String key(UUID sink, UUID log) {
    return sink + "/" + log;
  }

  MemoryFeed() {
    logs.add(
        new FeedLog(own, "node", System.currentTimeMillis(), process, Long.MAX_VALUE, 0, false));
  }

  synchronized void append(DeviceId device, long value, boolean written) {
    long seq = Math.max(lastSeq + 1, System.currentTimeMillis() * 1000);
    lastSeq = seq;
    long position = next++;
    if (written) {
      stored(own, position, seq, device, value);
    }
    settled = position;
    listeners.forEach(Runnable::run);
  }

  void stored(UUID log, long position, long seq, DeviceId device, long value) {
    entries
        .computeIfAbsent(log, id -> new CopyOnWriteArrayList<>())
        .add(
            new FeedEntry.Telemetry(
                position, seq, device, List.of(new TsKvEntry(value, KvEntry.of("v", value)))));
  }

  @Override
  public CompletionStage<List<FeedLog>> logs() {
    return CompletableFuture.completedFuture(
        logs.stream().filter(log -> !retired.contains(log.id())).toList());
  }

  @Override
  public CompletionStage<Boolean> lease(UUID logId, UUID owner, long now, long leaseUntil) {
    return CompletableFuture.completedFuture(true);
  }

  @Override
  public CompletionStage<Void> publish(UUID logId, long lastPosition, boolean closed) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> release(UUID logId, UUID owner) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> retire(UUID logId) {
    retired.add(logId);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> reopenRetired() {
    retired.clear();
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<List<FeedEntry>> read(UUID logId, long after, int limit) {
    CompletableFuture<Void> ready =
        after >= gatedAfter ? gate : CompletableFuture.completedFuture(null);
    return ready.thenApply(
        ignored ->
            entries.getOrDefault(logId, List.of()).stream()
                .filter(entry -> entry.position() > after)
                .limit(limit)
                .toList());
  }

  @Override
  public CompletionStage<Long> positionBefore(UUID logId, long seq) {
    long before = 0;
    for (FeedEntry entry : entries.getOrDefault(logId, List.of())) {
      if (entry.seq() >= seq) {
        break;
      }
      before = entry.position();
    }
    return CompletableFuture.completedFuture(before);
  }

  @Override
  public CompletionStage<Map<UUID, FeedCursor>> cursors(UUID sinkId) {
    Map<UUID, FeedCursor> out = new ConcurrentHashMap<>();
    cursors.values().stream()
        .filter(c -> c.sinkId().equals(sinkId))
        .forEach(c -> out.put(c.logId(), c));
    return CompletableFuture.completedFuture(out);
  }

  @Override
  public CompletionStage<Void> saveCursors(List<FeedCursor> saved) {
    // Another node's cursors are the test's to set: only this node's logs are saved.
    saved.stream()
        .filter(c -> !c.logId().equals(remoteOf(c)))
        .forEach(c -> cursors.put(key(c.sinkId(), c.logId()), c));
    return CompletableFuture.completedFuture(null);
  }

  private @Nullable UUID remoteOf(FeedCursor cursor) {
    return logs.stream()
        .filter(log -> log.node().equals("other") && log.id().equals(cursor.logId()))
        .map(FeedLog::id)
        .findFirst()
        .orElse(null);
  }

  @Override
  public CompletionStage<Void> deleteCursors(UUID sinkId) {
    cursors.values().removeIf(c -> c.sinkId().equals(sinkId));
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public UUID logId() {
    return own;
  }

  @Override
  public UUID processId() {
    return process;
  }

  @Override
  public void rotate() {
    throw new UnsupportedOperationException();
  }

  @Override
  public void leaseHeld(UUID logId, long until) {
    leasedUntil = until;
  }

  @Override
  public synchronized long settledPosition() {
    return settled;
  }

  @Override
  public synchronized long pendingSeqFloor() {
    return Math.max(lastSeq + 1, System.currentTimeMillis() * 1000);
  }

  @Override
  public synchronized @Nullable Tail tail(UUID logId, long after, int limit) {
    List<FeedEntry> out =
        entries.getOrDefault(own, List.of()).stream()
            .filter(entry -> entry.position() > after && entry.position() <= settled)
            .limit(limit)
            .toList();
    long through = out.size() < limit ? settled : out.get(out.size() - 1).position();
    return new Tail(out, Math.max(after, through));
  }

  @Override
  public void onSettled(Runnable listener) {
    listeners.add(listener);
  }
}
