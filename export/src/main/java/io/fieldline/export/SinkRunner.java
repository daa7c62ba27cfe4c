package io.fieldline.export;

import io.fieldline.common.feed.FeedCursor;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.feed.SinkDeadLetter;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.export.FeedMerge.LogState;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.Delivery;
import io.fieldline.export.sink.Sink;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers one sink's share of the feed on this node: this process's own log and the logs it
 * adopted, merged by sequence number, one batch in flight at a time.
 *
 * <p>Which entry may go next is {@link FeedMerge}'s (the order rule); the runner does the I/O
 * around it: reads cursors and entries, cuts batches, delivers, saves cursors. Entries are read
 * from memory while the sink keeps up ({@link LocalFeed#tail}), else from the store, a bounded
 * batch at a time; a batch that fails stays at the head and is tried again with capped exponential
 * backoff, for as long as the feed keeps it. Cursors are saved every {@code cursor-interval}: after
 * a crash, what was delivered since the last save is delivered again (the documented duplicates).
 *
 * <p>Confined to the exporter's thread: every method runs there, and every asynchronous result
 * comes back there through {@link Exporter.Context#run}.
 */
final class SinkRunner {

  private static final Logger LOG = LoggerFactory.getLogger(SinkRunner.class);

  private final Exporter.Context context;
  private final FeedMerge merge;
  private final List<Meter> meters = new ArrayList<>();
  private final Counter deliveredCounter;
  private final Counter retries;
  private final Counter rejected;
  private final Counter deadLetters;
  private SinkDefinition definition;
  private SinkFilter filter;
  private @Nullable Sink sink;
  private boolean restartPending; // the configuration changed during a delivery
  private boolean inFlight;
  private boolean savingCursors;
  private boolean pumpScheduled;
  // Whether an entry settling in the own log could start a batch now (read by storage threads):
  // false while paused, lingering, waiting to retry or with a batch in flight.
  private volatile boolean awaitingEntries = true;
  private long retryAt;
  private int failures;
  private long delivered;
  private @Nullable String lastError;
  private long lastErrorAt;
  private long lastCursorSave;
  private long lingerUntil;
  private boolean closed;

  SinkRunner(Exporter.Context context, SinkDefinition definition) {
    this.context = context;
    this.merge = new FeedMerge(context);
    this.definition = definition;
    this.filter = SinkFilter.of(Exporter.json(definition.filterJson()));
    Tags tags = Tags.of("sink", definition.name());
    this.deliveredCounter =
        Counter.builder("fieldline.export.delivered")
            .description("records delivered to the sink by this node")
            .tags(tags)
            .register(context.registry());
    this.retries =
        Counter.builder("fieldline.export.failures")
            .description("batches that failed and are retried (retry) or were dead-lettered")
            .tags(tags.and("outcome", "retry"))
            .register(context.registry());
    this.rejected =
        Counter.builder("fieldline.export.failures")
            .description("batches that failed and are retried (retry) or were dead-lettered")
            .tags(tags.and("outcome", "rejected"))
            .register(context.registry());
    this.deadLetters =
        Counter.builder("fieldline.export.dead.letters")
            .description("batches the receiver refused for good, kept as dead letters")
            .tags(tags)
            .register(context.registry());
    meters.add(deliveredCounter);
    meters.add(retries);
    meters.add(rejected);
    meters.add(deadLetters);
    meters.add(
        Gauge.builder("fieldline.export.lag.records", merge, FeedMerge::lagRecords)
            .description("feed entries stored and not yet delivered to the sink by this node")
            .tags(tags)
            .register(context.registry()));
    meters.add(
        Gauge.builder("fieldline.export.lag.seconds", this, r -> r.lagMillis() / 1000.0)
            .description("age of the oldest entry not yet delivered to the sink by this node")
            .tags(tags)
            .register(context.registry()));
    open();
  }

  private void open() {
    try {
      Sink created =
          context
              .factory(definition.type())
              .create(
                  definition.id(),
                  definition.name(),
                  Exporter.object(definition.configurationJson()));
      this.sink = created;
      created.start();
    } catch (RuntimeException e) {
      this.sink = null;
      String why = "cannot start: " + e.getMessage();
      error(why);
      LOG.warn("export: sink '{}' {}", definition.name(), why);
    }
  }

  SinkDefinition definition() {
    return definition;
  }

  /** A changed definition: a new configuration restarts the sink, a new generation replays. */
  void update(SinkDefinition changed) {
    boolean reconfigured =
        !changed.configurationJson().equals(definition.configurationJson())
            || !changed.type().equals(definition.type());
    boolean replay = changed.generation() != definition.generation();
    this.definition = changed;
    this.filter = SinkFilter.of(Exporter.json(changed.filterJson()));
    if (reconfigured && !inFlight) {
      Sink old = sink;
      if (old != null) {
        old.close();
      }
      open();
    } else if (reconfigured) {
      restartPending = true; // after the delivery in flight; see delivered()
    }
    if (replay) {
      merge.restart();
      delivered = 0;
    }
    schedulePump();
  }

  /** The logs this node delivers, and the others (whose watermarks order ours). */
  void logs(Collection<FeedLog> local, @Nullable UUID ownLog, Collection<FeedLog> remote) {
    merge.update(local, ownLog, remote);
    schedulePump();
  }

  /** Whether an adopted log is delivered to its end. */
  boolean finished(UUID logId) {
    return merge.finished(logId);
  }

  /** Whether newly settled entries should wake this runner; any thread. */
  boolean awaitingEntries() {
    return awaitingEntries;
  }

  void schedulePump() {
    if (!pumpScheduled && !closed) {
      pumpScheduled = true;
      context.run(
          () -> {
            pumpScheduled = false;
            pump();
          });
    }
  }

  private void schedulePumpIn(long millis) {
    context.schedule(this::schedulePump, Math.max(1, millis));
  }

  // Reads what is needed and sends the next batch, if one may go.
  private void pump() {
    Sink target = sink;
    if (closed || target == null) {
      return;
    }
    // Set before the entries are read: one settled after this read wakes the runner again.
    long now = context.now();
    awaitingEntries = !definition.paused() && !inFlight && now >= retryAt && lingerUntil == 0;
    // Cursors and the next entries are read even while paused or waiting: the lag shows.
    Batching batching = target.batching();
    int available = 0;
    for (LogState log : merge.logs()) {
      if (!log.ready) {
        loadCursor(log);
      } else if (log.buffer.size() < batching.maxRecords()) {
        fill(log);
      }
      available += log.buffer.size();
    }
    if (definition.paused() || inFlight || available == 0) {
      return;
    }
    if (now < retryAt) {
      schedulePumpIn(retryAt - now);
      return;
    }
    // A batch that is not full yet waits for its linger before it is made (made once, not at
    // every wake-up meanwhile).
    long linger = batching.linger().toMillis();
    if (linger > 0 && available < batching.maxRecords()) {
      if (lingerUntil == 0) {
        lingerUntil = now + linger;
      }
      if (now < lingerUntil) {
        awaitingEntries = false; // the linger's end reads what came meanwhile
        schedulePumpIn(lingerUntil - now);
        return;
      }
    }
    List<ExportRecord> batch = new ArrayList<>();
    Map<LogState, Integer> taken = new HashMap<>();
    int bytes = 0;
    boolean full = false;
    while (true) {
      FeedMerge.Next found = merge.next(taken);
      if (found == null) {
        break;
      }
      FeedEntry head = found.entry();
      LogState next = found.log();
      // The server's own writes (the start-up warm-up) are in the feed, never in a sink.
      FeedEntry kept = head.deviceId().reserved() ? null : filter.apply(head);
      if (kept != null) {
        CompletableFuture<Exporter.DeviceInfo> device = context.device(head.deviceId());
        if (!device.isDone()) {
          // Devices not seen yet (after a start, a thousand at once): looked up side by side,
          // not one round trip per device.
          lookUpBuffered().whenComplete((done, error) -> context.run(this::schedulePump));
          break;
        }
        Exporter.DeviceInfo info = device.getNow(Exporter.DeviceInfo.UNKNOWN);
        if (filter.takesType(info.type())) {
          List<ExportRecord> records =
              context.records().records(kept, info.name(), info.type(), kept.seq() / 1000);
          int size = 0;
          for (ExportRecord record : records) {
            size += record.json().length + 1;
          }
          if (!batch.isEmpty()
              && (batch.size() + records.size() > batching.maxRecords()
                  || bytes + size > batching.maxBytes())) {
            full = true;
            break;
          }
          batch.addAll(records);
          bytes += size;
        }
      }
      taken.merge(next, 1, Integer::sum);
      if (batch.size() >= batching.maxRecords()) {
        full = true;
        break;
      }
    }
    if (taken.isEmpty()) {
      return; // woken by new entries, a read, or the cursor timer
    }
    if (batch.isEmpty()) {
      merge.advance(taken);
      schedulePump();
      return;
    }
    lingerUntil = 0;
    inFlight = true;
    awaitingEntries = false; // the delivery's end reads what came meanwhile
    List<ExportRecord> sent = List.copyOf(batch);
    CompletableFuture<Delivery> delivery;
    try {
      delivery =
          target
              .deliver(sent)
              .toCompletableFuture()
              .orTimeout(batching.timeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) {
      delivery = CompletableFuture.failedFuture(e);
    }
    delivery.whenComplete(
        (outcome, error) ->
            context.run(
                () ->
                    delivered(
                        taken,
                        sent,
                        error != null
                            ? new Delivery.Retry(describe(error))
                            : outcome == null ? new Delivery.Retry("no answer") : outcome)));
  }

  // Starts the lookups of every device with a buffered entry; completes when they are done.
  private CompletableFuture<Void> lookUpBuffered() {
    List<CompletableFuture<Exporter.DeviceInfo>> pending = new ArrayList<>();
    for (LogState log : merge.logs()) {
      for (int i = 0; i < log.buffer.size(); i++) {
        CompletableFuture<Exporter.DeviceInfo> device =
            context.device(log.buffer.get(i).deviceId());
        if (!device.isDone()) {
          pending.add(device);
        }
      }
    }
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new));
  }

  private void delivered(Map<LogState, Integer> taken, List<ExportRecord> sent, Delivery outcome) {
    inFlight = false;
    if (closed) {
      return;
    }
    if (outcome instanceof Delivery.Delivered) {
      failures = 0;
      delivered += sent.size();
      deliveredCounter.increment(sent.size());
      context.latency(sent);
      merge.advance(taken);
    } else if (outcome instanceof Delivery.Rejected rejection) {
      rejected.increment();
      error("HTTP " + rejection.status() + ": " + rejection.error());
      SinkDeadLetter letter =
          new SinkDeadLetter(
              definition.id(),
              UUID.randomUUID(),
              context.now(),
              sent.size(),
              rejection.status(),
              rejection.error(),
              rejection.body());
      inFlight = true;
      context
          .sinkStore()
          .addDeadLetter(letter)
          .whenComplete(
              (ok, error) ->
                  context.run(
                      () -> {
                        inFlight = false;
                        if (error == null) {
                          deadLetters.increment();
                          merge.advance(taken);
                        } else {
                          backoff("dead letter not stored: " + describe(error));
                        }
                        schedulePump();
                      }));
      return;
    } else {
      retries.increment();
      backoff(((Delivery.Retry) outcome).error());
    }
    if (restartPending) {
      restartPending = false;
      Sink old = sink;
      if (old != null) {
        old.close();
      }
      open();
    }
    schedulePump();
  }

  private void backoff(String error) {
    failures++;
    error(error);
    long min = context.config().retryMin().toMillis();
    long max = context.config().retryMax().toMillis();
    long delay = Math.min(max, min << Math.min(failures - 1, 20));
    delay = delay / 2 + ThreadLocalRandom.current().nextLong(delay / 2 + 1);
    retryAt = context.now() + delay;
    if (failures == 1 || failures % 10 == 0) {
      LOG.warn(
          "export: sink '{}' delivery failed ({} in a row), retrying in {} ms: {}",
          definition.name(),
          failures,
          delay,
          error);
    }
  }

  private void error(String error) {
    lastError = error;
    lastErrorAt = context.now();
  }

  private void fill(LogState log) {
    if (log.fetching || (merge.ownNow(log) == null && log.exhausted)) {
      return;
    }
    LocalFeed local = merge.ownNow(log);
    int limit = context.config().readBatch();
    if (local != null) {
      long settled = local.settledPosition();
      if (log.scanned >= settled) {
        return;
      }
      LocalFeed.Tail tail = local.tail(log.log.id(), log.scanned, limit);
      if (tail != null) {
        log.buffer.addAll(tail.entries());
        log.scanned = tail.through();
        return;
      }
      log.fetching = true;
      context
          .feedStore()
          .read(log.log.id(), log.scanned, limit)
          .whenComplete(
              (entries, error) -> context.run(() -> fetched(log, entries, error, limit, settled)));
      return;
    }
    log.fetching = true;
    context
        .feedStore()
        .read(log.log.id(), log.scanned, limit)
        .whenComplete(
            (entries, error) ->
                context.run(() -> fetched(log, entries, error, limit, Long.MAX_VALUE)));
  }

  private void fetched(
      LogState log,
      @Nullable List<FeedEntry> entries,
      @Nullable Throwable error,
      int limit,
      long cap) {
    log.fetching = false;
    if (closed || !merge.holds(log)) {
      return;
    }
    if (error != null || entries == null) {
      error("feed read failed: " + (error == null ? "no rows" : describe(error)));
      retryAt = context.now() + context.config().retryMin().toMillis();
      schedulePump();
      return;
    }
    long last = log.scanned;
    for (FeedEntry entry : entries) {
      if (entry.position() <= cap && entry.position() > log.scanned) {
        log.buffer.addLast(entry);
        last = entry.position();
      }
    }
    if (entries.size() < limit) {
      // The end: of what is settled (own log), or of the log (adopted: its writer is gone).
      if (merge.ownNow(log) != null) {
        last = Math.max(last, cap);
      } else {
        log.exhausted = true;
      }
    }
    log.scanned = Math.max(log.scanned, last);
    if (log.buffer.isEmpty()) {
      log.position = Math.max(log.position, log.scanned);
    }
    schedulePump();
  }

  private void loadCursor(LogState log) {
    if (log.fetching) {
      return;
    }
    log.fetching = true;
    SinkDefinition sinkNow = definition;
    context
        .feedStore()
        .cursors(sinkNow.id())
        .thenCompose(
            cursors -> {
              FeedCursor saved = cursors.get(log.log.id());
              if (saved != null && saved.generation() == sinkNow.generation()) {
                return CompletableFuture.completedFuture(saved.position());
              }
              long from =
                  sinkNow.generation() > 0 && sinkNow.replayFrom() > 0
                      ? sinkNow.replayFrom()
                      : sinkNow.createdTime();
              if (log.log.createdAt() >= from) {
                return CompletableFuture.completedFuture(0L);
              }
              return context.feedStore().positionBefore(log.log.id(), from * 1000);
            })
        .whenComplete(
            (position, error) ->
                context.run(
                    () -> {
                      log.fetching = false;
                      if (closed || !merge.holds(log)) {
                        return;
                      }
                      if (error != null || position == null) {
                        error("cursor read failed: " + describe(error));
                        retryAt = context.now() + context.config().retryMin().toMillis();
                      } else if (sinkNow.generation() == definition.generation()) {
                        log.position = position;
                        log.scanned = position;
                        log.ready = true;
                      }
                      schedulePump();
                    }));
  }

  /** Saves cursors and reads the other nodes' watermarks, at most one save at a time. */
  void tick() {
    long now = context.now();
    if (closed
        || savingCursors
        || now - lastCursorSave < context.config().cursorInterval().toMillis()) {
      schedulePump();
      return;
    }
    lastCursorSave = now;
    savingCursors = true;
    List<FeedCursor> cursors = merge.cursors(definition.id(), definition.generation(), now);
    boolean readRemote = merge.watchesOthers();
    int generation = definition.generation();
    context
        .feedStore()
        .saveCursors(cursors)
        .thenCompose(
            saved ->
                readRemote
                    ? context.feedStore().cursors(definition.id())
                    : CompletableFuture.completedFuture(Map.<UUID, FeedCursor>of()))
        .whenComplete(
            (remote, error) ->
                context.run(
                    () -> {
                      savingCursors = false;
                      if (error != null) {
                        LOG.debug(
                            "export: cursors of '{}' not saved: {}",
                            definition.name(),
                            error.toString());
                      } else if (remote != null) {
                        merge.othersAt(remote, generation);
                      }
                      schedulePump();
                    }));
  }

  // Age of the oldest entry not yet delivered, 0 when there is none.
  private long lagMillis() {
    long oldest = merge.oldestMillis();
    return oldest == 0 ? 0 : Math.max(0, context.now() - oldest);
  }

  SinkNodeStatus status(String node) {
    return new SinkNodeStatus(
        definition.id(),
        node,
        state(),
        delivered,
        merge.lagRecords(),
        merge.oldestMillis(),
        lastError,
        lastErrorAt,
        context.now());
  }

  String state() {
    if (definition.paused()) {
      return "PAUSED";
    }
    if (sink == null) {
      return "ERROR";
    }
    return failures > 0 ? "RETRYING" : "RUNNING";
  }

  /**
   * Closes the sink and, unless it was deleted ({@code save} false: its cursors are gone with it),
   * saves the cursors one last time; completes when the save is done.
   */
  CompletableFuture<Void> close(boolean save) {
    closed = true;
    for (Meter meter : meters) {
      context.registry().remove(meter);
    }
    Sink target = sink;
    if (target != null) {
      target.close();
    }
    return save
        ? context
            .feedStore()
            .saveCursors(merge.cursors(definition.id(), definition.generation(), context.now()))
            .toCompletableFuture()
        : CompletableFuture.completedFuture(null);
  }

  private static String describe(@Nullable Throwable error) {
    Throwable cause = error;
    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause == null) {
      return "unknown";
    }
    if (cause instanceof java.util.concurrent.TimeoutException) {
      return "timed out";
    }
    return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
  }
}
