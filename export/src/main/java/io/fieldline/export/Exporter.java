package io.fieldline.export;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.feed.DeviceMoves;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.feed.FeedStore;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkStore;
import io.fieldline.export.sink.SinkFactory;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's side of export: holds feed logs (its own, and those of dead processes it adopts),
 * runs one {@link SinkRunner} per sink, and keeps them in step with the stored sink definitions.
 *
 * <p>Logs: this process writes its own log and holds its lease, renewed every {@code
 * refresh-interval}. A log whose lease ran out (its process died) is adopted by the first node that
 * takes the lease; a log that {@code adoptAtOnce} accepts (a restarted single node's previous log,
 * a restarted cluster node's own id) is taken at once. An adopted log delivered to its end by every
 * sink is retired; its rows expire by TTL.
 *
 * <p>Everything runs on one thread, {@code fieldline-export}: sinks deliver asynchronously, so the
 * thread only cuts batches and turns entries into records.
 */
public final class Exporter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Exporter.class);
  static final ObjectMapper MAPPER = new ObjectMapper();

  /** What a record says of its device. */
  record DeviceInfo(String name, String type) {
    static final DeviceInfo UNKNOWN = new DeviceInfo("", "");
  }

  /** What runners use of their exporter; every method is for the export thread. */
  interface Context {
    void run(Runnable task);

    void schedule(Runnable task, long delayMillis);

    long now();

    ExportConfig config();

    FeedStore feedStore();

    SinkStore sinkStore();

    @Nullable LocalFeed localFeed();

    MeterRegistry registry();

    SinkFactory factory(String type);

    CompletableFuture<DeviceInfo> device(DeviceId id);

    RecordJson records();

    DeviceMoves moves();

    void latency(List<ExportRecord> delivered);
  }

  private final ExportConfig config;
  private final FeedStore feeds;
  private final SinkStore sinks;
  private final @Nullable LocalFeed local;
  private final Map<String, SinkFactory> factories = new HashMap<>();
  private final MeterRegistry registry;
  private final String node;
  private final Predicate<FeedLog> adoptAtOnce;
  private final DeviceMoves moves;
  private final LongSupplier clock;
  private final UUID owner;
  private final ScheduledExecutorService executor;
  private final AsyncLoadingCache<DeviceId, DeviceInfo> devices;
  private final RecordJson records = new RecordJson();
  private final Timer latency;
  private final Counter lostLeases;
  private final Map<UUID, SinkRunner> runners = new HashMap<>(); // export thread
  private final Map<UUID, FeedLog> held = new HashMap<>(); // export thread: adopted logs
  private final AtomicBoolean pumpRequested = new AtomicBoolean();
  private volatile List<SinkRunner> active = List.of(); // the runners, for storage threads
  private List<FeedLog> known = List.of(); // export thread
  private boolean refreshing; // export thread
  private volatile boolean closed;

  /**
   * @param local this process's own log, or null when the feed is off on this node
   * @param findDevice a device by id, for the names and types records carry (cached here)
   * @param adoptAtOnce logs of dead processes to take without waiting for their lease to run out
   * @param moves the nodes that wrote a device over time ({@link DeviceMoves#NONE} on one node)
   */
  public Exporter(
      ExportConfig config,
      FeedStore feeds,
      SinkStore sinks,
      @Nullable LocalFeed local,
      Function<DeviceId, CompletionStage<Optional<Device>>> findDevice,
      List<SinkFactory> sinkFactories,
      MeterRegistry registry,
      String node,
      Predicate<FeedLog> adoptAtOnce,
      DeviceMoves moves) {
    this.config = config;
    this.feeds = feeds;
    this.sinks = sinks;
    this.local = local;
    for (SinkFactory factory : sinkFactories) {
      factories.put(factory.type(), factory);
    }
    this.registry = registry;
    this.node = node;
    this.adoptAtOnce = adoptAtOnce;
    this.moves = moves;
    this.clock = System::currentTimeMillis;
    this.owner = local == null ? UUID.randomUUID() : local.processId();
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread thread = new Thread(task, "fieldline-export");
              thread.setDaemon(true);
              return thread;
            });
    this.devices =
        Caffeine.newBuilder()
            .maximumSize(100_000)
            .expireAfterWrite(Duration.ofMinutes(1))
            .buildAsync(
                (id, executor) ->
                    findDevice
                        .apply(id)
                        .thenApply(
                            found ->
                                found
                                    .map((Device d) -> new DeviceInfo(d.name(), d.type()))
                                    .orElse(DeviceInfo.UNKNOWN))
                        .toCompletableFuture());
    this.lostLeases =
        Counter.builder("fieldline.feed.leases.lost")
            .description("times another process took this process's own feed log")
            .register(registry);
    this.latency =
        Timer.builder("fieldline.export.latency")
            .description("from a record's storage to its delivery")
            .publishPercentileHistogram()
            .register(registry);
  }

  /** The sink types this exporter knows. */
  Map<String, SinkFactory> factories() {
    return factories;
  }

  ExportConfig config() {
    return config;
  }

  /** Starts refreshing and delivering. */
  public void start() {
    if (local != null) {
      local.onSettled(this::requestPump);
    }
    long refresh = config.refreshInterval().toMillis();
    executor.scheduleWithFixedDelay(this::refresh, 0, refresh, TimeUnit.MILLISECONDS);
    long cursors = config.cursorInterval().toMillis();
    executor.scheduleWithFixedDelay(this::tick, cursors, cursors, TimeUnit.MILLISECONDS);
  }

  /** Looks at definitions and logs now rather than at the next interval. */
  public void refreshSoon() {
    executor.execute(this::refresh);
  }

  // Called on storage threads whenever the own log's settled position advances. Only a runner
  // waiting for entries needs waking: one that lingers, waits to retry or has a batch in flight
  // wakes on its own timer or delivery. A burst of completions costs one pass at most.
  private void requestPump() {
    boolean wanted = false;
    for (SinkRunner runner : active) {
      wanted |= runner.awaitingEntries();
    }
    if (wanted && pumpRequested.compareAndSet(false, true)) {
      executor.execute(
          () -> {
            pumpRequested.set(false);
            runners.values().forEach(SinkRunner::schedulePump);
          });
    }
  }

  private void tick() {
    for (SinkRunner runner : runners.values()) {
      runner.tick();
    }
  }

  private void refresh() {
    if (closed || refreshing) {
      return;
    }
    refreshing = true;
    long now = clock.getAsLong();
    long until = now + config.lease().toMillis();
    UUID ownLog = local == null ? null : local.logId();
    CompletableFuture<Void> own =
        local == null || ownLog == null
            ? CompletableFuture.completedFuture(null)
            : feeds
                .lease(ownLog, owner, now, until)
                .thenCompose(
                    ok -> {
                      if (ok) {
                        local.leaseHeld(ownLog, until); // the fence: see LocalFeed#leaseHeld
                      } else {
                        // Frozen longer than the lease: another process adopted the log and
                        // delivers it. New entries go to a new log of ours.
                        LOG.error(
                            "export: another process took this process's feed log {} (frozen"
                                + " longer than fieldline.export.lease?); writing a new log",
                            ownLog);
                        lostLeases.increment();
                        local.rotate();
                      }
                      return feeds.publish(local.logId(), local.settledPosition(), false);
                    })
                .toCompletableFuture();
    own.thenCompose(done -> feeds.logs())
        .thenCompose(logs -> adopt(logs, now, until).thenApply(done -> logs))
        .thenCompose(logs -> sinks.sinks().thenApply(defs -> Map.entry(logs, defs)))
        .whenComplete(
            (found, error) ->
                executor.execute(
                    () -> {
                      refreshing = false;
                      if (error != null) {
                        LOG.warn("export: refresh failed: {}", error.toString());
                        return;
                      }
                      apply(found.getKey(), found.getValue());
                    }));
  }

  // Renews the logs held, and takes those whose process is gone.
  private CompletableFuture<Void> adopt(List<FeedLog> logs, long now, long until) {
    List<CompletableFuture<?>> each = new ArrayList<>();
    for (FeedLog log : logs) {
      if (local != null && log.id().equals(local.logId())) {
        continue;
      }
      boolean mine = owner.equals(log.owner());
      boolean free = log.owner() == null || log.leaseUntil() < now;
      boolean atOnce = !mine && adoptAtOnce.test(log);
      if (mine || free || atOnce) {
        each.add(
            feeds
                .lease(log.id(), owner, atOnce ? Long.MAX_VALUE : now, until)
                .thenAccept(
                    ok ->
                        executor.execute(
                            () -> {
                              if (ok) {
                                if (held.put(log.id(), log) == null) {
                                  LOG.info(
                                      "export: adopted feed log {} of node {}",
                                      log.id(),
                                      log.node());
                                }
                              } else {
                                held.remove(log.id());
                              }
                            }))
                .toCompletableFuture());
      }
    }
    return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
        .exceptionally(error -> null);
  }

  private void apply(List<FeedLog> logs, List<SinkDefinition> definitions) {
    if (closed) {
      return;
    }
    known = logs;
    Set<UUID> present = new HashSet<>();
    for (SinkDefinition definition : definitions) {
      present.add(definition.id());
      SinkRunner runner = runners.get(definition.id());
      if (runner == null) {
        runners.put(definition.id(), new SinkRunner(context, definition));
      } else if (runner.definition().updatedTime() != definition.updatedTime()
          || runner.definition().generation() != definition.generation()) {
        runner.update(definition);
      }
    }
    for (UUID gone : new ArrayList<>(runners.keySet())) {
      if (!present.contains(gone)) {
        SinkRunner runner = runners.remove(gone);
        if (runner != null) {
          runner.close(false); // deleted: its cursors went with it
        }
      }
    }
    active = List.copyOf(runners.values());
    List<FeedLog> mine = new ArrayList<>(held.values());
    List<FeedLog> others = new ArrayList<>();
    UUID ownId = local == null ? null : local.logId();
    for (FeedLog log : logs) {
      if (log.id().equals(ownId)) {
        mine.add(log);
      } else if (!held.containsKey(log.id())) {
        others.add(log);
      }
    }
    for (SinkRunner runner : runners.values()) {
      runner.logs(mine, ownId, others);
      sinks.saveStatus(runner.status(node));
    }
    retireFinished();
  }

  private void retireFinished() {
    for (FeedLog log : new ArrayList<>(held.values())) {
      boolean finished = runners.values().stream().allMatch(runner -> runner.finished(log.id()));
      // With no sink at all, nothing needs it: a sink created later starts after its entries.
      if (finished) {
        held.remove(log.id());
        feeds
            .retire(log.id())
            .thenCompose(done -> feeds.release(log.id(), owner))
            .whenComplete(
                (done, error) -> {
                  if (error == null) {
                    LOG.info("export: feed log {} delivered to every sink, retired", log.id());
                  }
                });
      }
    }
  }

  /** Saves every runner's cursors, closes the sinks and gives the leases up; blocks briefly. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    CompletableFuture<Void> done =
        CompletableFuture.supplyAsync(
                () -> {
                  closed = true;
                  List<CompletableFuture<?>> saves = new ArrayList<>();
                  for (SinkRunner runner : runners.values()) {
                    saves.add(runner.close(true).exceptionally(error -> null));
                  }
                  for (UUID log : held.keySet()) {
                    saves.add(feeds.release(log, owner).toCompletableFuture());
                  }
                  if (local != null) {
                    saves.add(feeds.release(local.logId(), owner).toCompletableFuture());
                  }
                  return CompletableFuture.allOf(saves.toArray(CompletableFuture[]::new));
                },
                executor)
            .thenCompose(all -> all);
    try {
      done.get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("export: cursors or leases not saved at shutdown: {}", e.toString());
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    }
    executor.shutdownNow();
  }

  static JsonNode json(String text) {
    try {
      return MAPPER.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ObjectNode object(String text) {
    JsonNode node = json(text);
    return node instanceof ObjectNode object ? object : MAPPER.createObjectNode();
  }

  private final Context context =
      new Context() {
        @Override
        public void run(Runnable task) {
          if (!closed) {
            executor.execute(task);
          }
        }

        @Override
        public void schedule(Runnable task, long delayMillis) {
          if (!closed) {
            executor.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
          }
        }

        @Override
        public long now() {
          return clock.getAsLong();
        }

        @Override
        public ExportConfig config() {
          return config;
        }

        @Override
        public FeedStore feedStore() {
          return feeds;
        }

        @Override
        public SinkStore sinkStore() {
          return sinks;
        }

        @Override
        public @Nullable LocalFeed localFeed() {
          return local;
        }

        @Override
        public MeterRegistry registry() {
          return registry;
        }

        @Override
        public SinkFactory factory(String type) {
          SinkFactory factory = factories.get(type);
          if (factory == null) {
            throw new IllegalStateException("unknown sink type " + type);
          }
          return factory;
        }

        @Override
        public CompletableFuture<DeviceInfo> device(DeviceId id) {
          return devices.get(id);
        }

        @Override
        public RecordJson records() {
          return records;
        }

        @Override
        public DeviceMoves moves() {
          return moves;
        }

        @Override
        public void latency(List<ExportRecord> delivered) {
          long now = clock.getAsLong();
          for (ExportRecord record : delivered) {
            latency.record(Math.max(0, now - record.storedAt()), TimeUnit.MILLISECONDS);
          }
        }
      };
}
