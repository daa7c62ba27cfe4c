package io.fieldline.dao.cassandra.registry;

import com.datastax.oss.driver.api.core.uuid.Uuids;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.dao.cassandra.registry.DeviceChangeLog.Change;
import io.fieldline.dao.cassandra.registry.DeviceTable.DeviceRow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's directory of every device, for the device listing ({@code DeviceRegistry.page}):
 * ThingsBoard's listing sorts by name, creation time, type or label and searches names by
 * substring, which no Cassandra table can serve without reading every page before the one asked
 * for. So each node keeps a {@link Summary} of every device in memory, sorts and filters there
 * (each order's sorted array is kept until the next change), and reads only the page's rows.
 *
 * <p><b>Staying current.</b> Filled by one full scan of {@code devices} (at start, sharing the scan
 * of the credential cache's preload, or at the first listing); then every listing first catches up
 * with the changes recorded by any node in {@link DeviceChangeLog} since the last catch-up, minus
 * {@link #OVERLAP} for clocks and writes in flight (usually one read of one hourly partition,
 * returning nothing), and reads each changed device's row again: present, its summary is replaced;
 * gone, it is removed. A change already applied is remembered by its id for the overlap, so it is
 * read once. A node's own changes take the same path, so whatever wrote last, the row read after
 * the change's record wins. Too many changes at once ({@value #MAX_CHANGES}), or a last catch-up
 * older than the change log keeps ({@link DeviceChangeLog#RETENTION} minus an hour), means a full
 * scan instead. One catch-up runs at a time: a listing arriving while one runs waits for the next,
 * so a change completed on any node before a listing starts is in it.
 *
 * <p><b>Bounds.</b> A summary costs about 225 bytes of heap (measured: the map entry, the record,
 * its UUID, a 20-character name, half of them a label; types are shared), plus 4 bytes per device
 * for each sort order listed since the last change (8 orders at most): about 25 MB per 100,000
 * devices. It is meant for fleets up to about {@value #LARGE_FLEET} devices (logged once when
 * exceeded); a bigger fleet needs a search index. Sorting costs O(n log n) at the first listing in
 * an order after a change, a text search O(n) per listing (docs/storage.md has the figures).
 *
 * <p>Thread-safe: summaries in a {@link ConcurrentHashMap} replaced whole by a full scan; the
 * catch-up state ({@code checkpoint}, {@code applied}) is touched only by the one catch-up running,
 * each started after the previous one completed.
 */
final class DeviceDirectory {

  /** How far before the last catch-up the next one reads: clock skew and writes in flight. */
  static final Duration OVERLAP = Duration.ofSeconds(15);

  /** More changed devices than this in one catch-up: a full scan is cheaper. */
  static final int MAX_CHANGES = 1_000;

  /** A fleet above this is logged once: the directory is not meant for it. */
  static final int LARGE_FLEET = 250_000;

  private static final Logger LOG = LoggerFactory.getLogger(DeviceDirectory.class);
  private static final long NEVER = Long.MIN_VALUE;
  private static final int LOADS_AT_ONCE = 16;

  /**
   * What the listing sorts and searches by.
   *
   * @param id the device id
   * @param name its unique name
   * @param type its type (one shared instance per distinct type)
   * @param label its label, null when none
   * @param createdTime its creation time
   */
  record Summary(UUID id, String name, String type, @Nullable String label, long createdTime) {}

  private record Order(DevicePageQuery.SortProperty property, SortOrder order) {}

  private record Sorted(long version, Summary[] summaries) {}

  /**
   * The ids of one page, in order, and the number of matching devices.
   *
   * @param ids the page's device ids
   * @param total devices matching the query
   */
  record Slice(List<UUID> ids, long total) {}

  private final DeviceTable table;
  private final DeviceChangeLog changes;
  private final LongSupplier clock;
  private final Map<String, String> types = new ConcurrentHashMap<>();
  private final Map<Order, Sorted> sorted = new ConcurrentHashMap<>();
  private final AtomicLong version = new AtomicLong();
  private final AtomicLong fullScans = new AtomicLong();
  private final AtomicBoolean warnedLarge = new AtomicBoolean();
  private volatile Map<UUID, Summary> byId = new ConcurrentHashMap<>();
  private volatile Consumer<DeviceId> onChanged = device -> {};

  // Owned by the running catch-up.
  private long checkpoint = NEVER;
  private final Map<UUID, Long> applied = new HashMap<>();

  // Guarded by this.
  private @Nullable CompletableFuture<Void> running;
  private @Nullable CompletableFuture<Void> next;

  /**
   * @param clock epoch milliseconds, the clock change records are stamped with
   */
  DeviceDirectory(DeviceTable table, DeviceChangeLog changes, LongSupplier clock) {
    this.table = table;
    this.changes = changes;
    this.clock = clock;
  }

  /** Tells {@code listener} of each device found changed by a catch-up (any thread). */
  void onChanged(Consumer<DeviceId> listener) {
    this.onChanged = listener;
  }

  /** Devices in the directory now. */
  int size() {
    return byId.size();
  }

  /** Full scans done (at start, and when catching up would cost more). */
  long fullScans() {
    return fullScans.get();
  }

  /**
   * Fills the directory with a full scan, handing each device to {@code each} too: the start's one
   * scan of {@code devices}.
   *
   * @throws IllegalStateException (synchronously) when a listing already started
   */
  CompletionStage<Void> load(Consumer<Device> each) {
    CompletableFuture<Void> mine;
    synchronized (this) {
      if (running != null || fullScans.get() > 0) {
        throw new IllegalStateException("the directory is loaded once, before any listing");
      }
      mine = new CompletableFuture<>();
      running = mine;
    }
    run(mine, () -> fullScan(clock.getAsLong(), each));
    return mine.minimalCompletionStage();
  }

  /** The page of {@code query}, with its totals, after catching up with every node's changes. */
  CompletionStage<PageData<Device>> page(DevicePageQuery query) {
    return catchUp()
        .thenCompose(
            done -> {
              Slice slice = slice(query);
              return rows(slice.ids())
                  .thenApply(
                      rows ->
                          PageData.of(
                              rows.stream().flatMap(Optional::stream).toList(),
                              slice.total(),
                              query.pageSize(),
                              query.page()));
            });
  }

  /** The ids of the query's page and the number of matches, from memory. */
  Slice slice(DevicePageQuery query) {
    Summary[] all = sortedBy(new Order(query.sortProperty(), query.sortOrder()));
    String needle = query.textSearch().orElse("");
    long from = (long) query.page() * query.pageSize();
    long to = from + query.pageSize();
    List<UUID> ids = new ArrayList<>(Math.min(query.pageSize(), all.length));
    if (needle.isEmpty()) {
      for (long i = from; i < Math.min(to, all.length); i++) {
        ids.add(all[(int) i].id());
      }
      return new Slice(ids, all.length);
    }
    long matches = 0;
    for (Summary summary : all) {
      if (containsIgnoringCase(summary.name(), needle)) {
        if (matches >= from && matches < to) {
          ids.add(summary.id());
        }
        matches++;
      }
    }
    return new Slice(ids, matches);
  }

  private Summary[] sortedBy(Order order) {
    long current = version.get();
    Sorted cached = sorted.get(order);
    if (cached != null && cached.version() == current) {
      return cached.summaries();
    }
    Summary[] all = byId.values().toArray(Summary[]::new);
    Arrays.sort(all, comparator(order));
    sorted.put(order, new Sorted(current, all));
    return all;
  }

  // ThingsBoard's orders; ties by name, then id, ascending whatever the order. Labels sort as
  // PostgreSQL's do: a missing label after every label ascending, before them descending.
  private static Comparator<Summary> comparator(Order order) {
    Comparator<Summary> primary =
        switch (order.property()) {
          case NAME -> Comparator.comparing(Summary::name);
          case CREATED_TIME -> Comparator.comparingLong(Summary::createdTime);
          case TYPE -> Comparator.comparing(Summary::type);
          case LABEL ->
              Comparator.comparing(
                  Summary::label, Comparator.nullsLast(Comparator.<String>naturalOrder()));
        };
    if (order.order() == SortOrder.DESC) {
      primary = primary.reversed();
    }
    return primary.thenComparing(Summary::name).thenComparing(Summary::id);
  }

  static boolean containsIgnoringCase(String text, String needle) {
    int last = text.length() - needle.length();
    for (int i = 0; i <= last; i++) {
      if (text.regionMatches(true, i, needle, 0, needle.length())) {
        return true;
      }
    }
    return false;
  }

  // One catch-up at a time; a caller arriving while one runs gets the next, shared with every
  // caller arriving meanwhile (so it starts after they all asked).
  private CompletionStage<Void> catchUp() {
    CompletableFuture<Void> mine;
    synchronized (this) {
      if (running != null) {
        if (next == null) {
          next = new CompletableFuture<>();
        }
        return next.minimalCompletionStage();
      }
      mine = new CompletableFuture<>();
      running = mine;
    }
    run(mine, this::catchUpOnce);
    return mine.minimalCompletionStage();
  }

  private void run(CompletableFuture<Void> mine, Supplier<CompletionStage<Void>> job) {
    CompletionStage<Void> stage;
    try {
      stage = job.get();
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    stage.whenComplete(
        (ok, error) -> {
          CompletableFuture<Void> queued;
          synchronized (this) {
            queued = next;
            next = null;
            running = queued;
          }
          if (error != null) {
            mine.completeExceptionally(error);
          } else {
            mine.complete(null);
          }
          if (queued != null) {
            run(queued, this::catchUpOnce);
          }
        });
  }

  private CompletionStage<Void> catchUpOnce() {
    long started = clock.getAsLong();
    long retention = DeviceChangeLog.RETENTION.minusHours(1).toMillis();
    if (checkpoint == NEVER || started - checkpoint > retention) {
      return fullScan(started, device -> {});
    }
    long overlap = OVERLAP.toMillis();
    return changes
        .since(checkpoint - overlap, started + overlap)
        .thenCompose(
            found -> {
              List<Change> fresh = new ArrayList<>();
              Set<UUID> devices = new LinkedHashSet<>();
              for (Change change : found) {
                if (!applied.containsKey(change.changed())) {
                  fresh.add(change);
                  devices.add(change.device());
                }
              }
              if (devices.size() > MAX_CHANGES) {
                return fullScan(started, device -> {});
              }
              return refresh(List.copyOf(devices))
                  .thenApply(
                      done -> {
                        for (Change change : fresh) {
                          applied.put(change.changed(), Uuids.unixTimestamp(change.changed()));
                        }
                        // Read again by no later catch-up: it starts at started - overlap.
                        applied.values().removeIf(at -> at < started - overlap);
                        checkpoint = started;
                        return null;
                      });
            });
  }

  // Reads the devices again and applies what it finds.
  private CompletionStage<Void> refresh(List<UUID> devices) {
    if (devices.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return rows(devices)
        .thenApply(
            rows -> {
              Map<UUID, Summary> current = byId;
              for (int i = 0; i < devices.size(); i++) {
                UUID id = devices.get(i);
                Optional<Device> row = rows.get(i);
                if (row.isPresent()) {
                  current.put(id, summary(row.get()));
                } else {
                  current.remove(id);
                }
              }
              version.incrementAndGet();
              warnIfLarge(current.size());
              devices.forEach(id -> onChanged.accept(new DeviceId(id)));
              return null;
            });
  }

  private CompletionStage<Void> fullScan(long started, Consumer<Device> each) {
    Map<UUID, Summary> scanned = new ConcurrentHashMap<>();
    return table
        .scanAsync(
            device -> {
              scanned.put(device.id().value(), summary(device));
              each.accept(device);
            })
        .thenApply(
            done -> {
              byId = scanned;
              version.incrementAndGet();
              fullScans.incrementAndGet();
              // Changes made during the scan are read again by the next catch-up.
              applied.clear();
              checkpoint = started;
              warnIfLarge(scanned.size());
              return null;
            });
  }

  private void warnIfLarge(int size) {
    if (size > LARGE_FLEET && warnedLarge.compareAndSet(false, true)) {
      LOG.warn(
          "device directory: {} devices, above the {} it is meant for (about 225 bytes of heap"
              + " each on every node, docs/storage.md)",
          size,
          LARGE_FLEET);
    }
  }

  private Summary summary(Device device) {
    return new Summary(
        device.id().value(),
        device.name(),
        types.computeIfAbsent(device.type(), type -> type),
        device.label(),
        device.createdTime());
  }

  /** The devices' rows, in their order (empty: gone), at most {@value #LOADS_AT_ONCE} at once. */
  private CompletionStage<List<Optional<Device>>> rows(List<UUID> ids) {
    List<Optional<Device>> out = new ArrayList<>(ids.size());
    return loadFrom(ids, 0, out).thenApply(done -> out);
  }

  private CompletionStage<Void> loadFrom(List<UUID> ids, int from, List<Optional<Device>> out) {
    if (from >= ids.size()) {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<Optional<DeviceRow>>> group = new ArrayList<>(LOADS_AT_ONCE);
    for (UUID id : ids.subList(from, Math.min(ids.size(), from + LOADS_AT_ONCE))) {
      group.add(table.load(id).toCompletableFuture());
    }
    return CompletableFuture.allOf(group.toArray(CompletableFuture<?>[]::new))
        .thenCompose(
            done -> {
              group.forEach(row -> out.add(row.join().map(DeviceRow::device)));
              return loadFrom(ids, from + LOADS_AT_ONCE, out);
            });
  }
}
