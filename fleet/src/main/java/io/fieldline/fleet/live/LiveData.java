package io.fieldline.fleet.live;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who watches which device's data, across the cluster, and the publishing of that data once stored:
 * the bridge between the device actors' writes and live subscriptions (the WebSocket API).
 *
 * <p>Publishing every stored message as an event would cost every message a trip to every node,
 * although almost no device is watched at any moment. So a node announces, as a {@link
 * DeviceEvent.DataWatched} event on the ordinary event path, when it starts watching a device (its
 * first live subscription to it) and when it stops (its last); every node keeps the watching nodes
 * per device, and the node that stores a device's data ({@link #publishing(TelemetryStore)}, the
 * store the device actors write through) sends {@link DeviceEvent.TelemetryStored} and client
 * {@link DeviceEvent.AttributesUpdated} events to those nodes only, and only for watched devices.
 * The event goes out when the write completed, before the device's acknowledgement: a subscriber
 * never sees a value that is not stored. A failure to publish never fails the write.
 *
 * <p>A watch is ready ({@link Watch#ready()}) once every member answered its announcement: a value
 * stored after that is published, so a subscription that reads the current values after it misses
 * nothing in between.
 *
 * <p>Keeping it right: a node id is qualified with an incarnation (a node restarted under the same
 * id is another watcher, and its former self's watches are dropped when it announces). {@link
 * #membersChanged} forgets the watches of nodes that left and announces this node's own again;
 * {@link #refresh} (every {@code refresh-interval}) announces them again too, so an announcement
 * lost on the way is repaired, and forgets remote watches not announced for three intervals.
 * Announcements go out in batches, each after the previous one was answered, to stay within the
 * event streams' in-flight bounds.
 *
 * <p>Thread-safe. Until {@link #useEvents} is called (the cluster tier starts after the device
 * tier), events stay on this node.
 */
public final class LiveData implements DeviceEventListener {

  private static final Logger LOG = LoggerFactory.getLogger(LiveData.class);

  /** Announcements in flight at once when announcing many watches. */
  static final int ANNOUNCE_BATCH = 256;

  private final String nodeId;
  private final String self;
  private final LocalDeviceEvents local;
  private final Duration refreshInterval;
  private final LongSupplier nanoClock;
  private volatile DeviceEvents events;

  /**
   * This node's live subscriptions per device, and the announcement of each watched device; guarded
   * by itself (watching is rare, and the announcements of one device must go out in the order its
   * counts changed).
   */
  private final Map<DeviceId, Integer> ownWatches = new HashMap<>();

  private final Map<DeviceId, CompletableFuture<Void>> announced = new HashMap<>();

  /** The incarnation last heard from of each other node. */
  private final Map<String, String> incarnations = new ConcurrentHashMap<>();

  /** Every watcher (node incarnation, this one included) of each device, and when last heard. */
  private final Map<DeviceId, Map<String, Long>> watchers = new ConcurrentHashMap<>();

  /**
   * @param nodeId this node's id (any constant on a single node)
   * @param local this node's listeners; remote {@code DataWatched} events arrive there
   * @param refreshInterval how often this node's watches are announced again
   */
  public LiveData(String nodeId, LocalDeviceEvents local, Duration refreshInterval) {
    this(nodeId, local, refreshInterval, System::nanoTime);
  }

  LiveData(
      String nodeId, LocalDeviceEvents local, Duration refreshInterval, LongSupplier nanoClock) {
    this.nodeId = nodeId;
    this.self = nodeId + "/" + UUID.randomUUID();
    this.local = local;
    this.refreshInterval = refreshInterval;
    this.nanoClock = nanoClock;
    this.events = local;
    local.subscribeAll(this);
  }

  /**
   * Publishes through {@code clusterEvents} from now on (this node's listeners and every other).
   */
  public void useEvents(DeviceEvents clusterEvents) {
    this.events = clusterEvents;
  }

  /** A registration for a device's events; {@link #ready()} says when it is announced. */
  public interface Watch extends DeviceEvents.Subscription {
    /** Completes once every member answered (or failed to answer) this node's announcement. */
    CompletionStage<Void> ready();
  }

  /**
   * Registers {@code listener} for the events of {@code device} (its stored data included) until
   * the returned watch is closed.
   */
  public Watch watch(DeviceId device, DeviceEventListener listener) {
    DeviceEvents.Subscription subscription = local.subscribe(device, listener);
    CompletableFuture<Void> ready;
    synchronized (ownWatches) {
      if (ownWatches.merge(device, 1, Integer::sum) == 1) {
        announced.put(device, announce(device, true));
      }
      // put above when this is the device's first watch, kept until its last one closes
      ready = Objects.requireNonNull(announced.get(device));
    }
    return new Watch() {
      private boolean closed;

      @Override
      public CompletionStage<Void> ready() {
        return ready;
      }

      @Override
      public synchronized void close() {
        if (closed) {
          return;
        }
        closed = true;
        subscription.close();
        unwatch(device);
      }
    };
  }

  private void unwatch(DeviceId device) {
    synchronized (ownWatches) {
      Integer count = ownWatches.get(device);
      if (count == null) {
        return;
      }
      if (count > 1) {
        ownWatches.put(device, count - 1);
        return;
      }
      ownWatches.remove(device);
      announced.remove(device);
      announce(device, false);
    }
  }

  private CompletableFuture<Void> announce(DeviceId device, boolean watched) {
    DeviceEvent.DataWatched event = new DeviceEvent.DataWatched(device, self, watched);
    // Applied here at once: this node's own writes must be published from the next one on.
    apply(event);
    return events.publish(event).handle((taken, failure) -> (Void) null).toCompletableFuture();
  }

  /** Whether any node watches {@code device} now. */
  public boolean watched(DeviceId device) {
    return watchers.containsKey(device);
  }

  /** Devices this node watches (a gauge). */
  public int devicesWatchedHere() {
    synchronized (ownWatches) {
      return ownWatches.size();
    }
  }

  @Override
  public boolean onEvent(DeviceEvent event) {
    if (event instanceof DeviceEvent.DataWatched watched) {
      apply(watched);
    }
    return false;
  }

  private void apply(DeviceEvent.DataWatched event) {
    String watcher = event.nodeId();
    String watcherNode = nodeOf(watcher);
    if (watcherNode.equals(nodeId) && !watcher.equals(self)) {
      return; // a former incarnation of this node, heard late: it watches nothing
    }
    String before = incarnations.put(watcherNode, watcher);
    if (before != null && !before.equals(watcher)) {
      // The node restarted under the same id: its former incarnation watches nothing.
      forgetWatchers(known -> known.equals(before));
    }
    long now = nanoClock.getAsLong();
    watchers.compute(
        event.deviceId(),
        (d, nodes) -> {
          Map<String, Long> kept = nodes == null ? new ConcurrentHashMap<>() : nodes;
          if (event.watched()) {
            kept.put(watcher, now);
          } else {
            kept.remove(watcher);
          }
          return kept.isEmpty() ? null : kept;
        });
  }

  private static String nodeOf(String watcher) {
    int slash = watcher.indexOf('/');
    return slash < 0 ? watcher : watcher.substring(0, slash);
  }

  /**
   * The cluster's members changed to {@code members}: forgets the watches of nodes no longer among
   * them and announces this node's own watches again.
   */
  public void membersChanged(Collection<String> members) {
    Set<String> alive = new HashSet<>(members);
    alive.add(nodeId);
    forgetWatchers(watcher -> !alive.contains(nodeOf(watcher)));
    incarnations.keySet().retainAll(alive);
    announceAll();
  }

  /**
   * Announces this node's watches again and forgets remote watches not announced for three refresh
   * intervals (their node stopped watching, and that announcement was lost).
   */
  public void refresh() {
    long oldest = nanoClock.getAsLong() - refreshInterval.multipliedBy(3).toNanos();
    for (DeviceId device : List.copyOf(watchers.keySet())) {
      watchers.computeIfPresent(
          device,
          (d, nodes) -> {
            nodes.entrySet().removeIf(e -> !e.getKey().equals(self) && e.getValue() < oldest);
            return nodes.isEmpty() ? null : nodes;
          });
    }
    announceAll();
  }

  private void forgetWatchers(Predicate<String> gone) {
    for (DeviceId device : List.copyOf(watchers.keySet())) {
      watchers.computeIfPresent(
          device,
          (d, nodes) -> {
            nodes.keySet().removeIf(gone);
            return nodes.isEmpty() ? null : nodes;
          });
    }
  }

  private void announceAll() {
    List<DeviceId> own;
    synchronized (ownWatches) {
      own = new ArrayList<>(ownWatches.keySet());
    }
    LOG.debug("[live] announcing {} watched devices again", own.size());
    announceFrom(own, 0);
  }

  private void announceFrom(List<DeviceId> devices, int from) {
    int to = Math.min(devices.size(), from + ANNOUNCE_BATCH);
    if (from >= to) {
      return;
    }
    List<CompletableFuture<Void>> batch = new ArrayList<>(to - from);
    for (DeviceId device : devices.subList(from, to)) {
      synchronized (ownWatches) {
        if (ownWatches.containsKey(device)) {
          batch.add(announce(device, true));
        }
      }
    }
    CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new))
        .thenRun(() -> announceFrom(devices, to));
  }

  /** The refresh interval (for the caller that schedules {@link #refresh}). */
  public Duration refreshInterval() {
    return refreshInterval;
  }

  /**
   * {@code store}, publishing what it stored for watched devices once each write completed: the
   * store to hand the device actors.
   */
  public TelemetryStore publishing(TelemetryStore store) {
    return new PublishingStore(store);
  }

  private void publishIfWatched(DeviceEvent event) {
    try {
      Map<String, Long> nodes = watchers.get(event.deviceId());
      if (nodes == null) {
        return;
      }
      Set<String> to = new HashSet<>();
      nodes.keySet().forEach(watcher -> to.add(nodeOf(watcher)));
      events.publishTo(to, event);
    } catch (RuntimeException e) {
      // The write is stored and its acknowledgement must go out: a live update is not worth it.
      LOG.warn("[live] publishing stored data of {} failed: {}", event.deviceId(), e.toString());
    }
  }

  private final class PublishingStore implements TelemetryStore {

    private final TelemetryStore store;

    PublishingStore(TelemetryStore store) {
      this.store = store;
    }

    @Override
    public CompletionStage<Void> writeTelemetry(DeviceId deviceId, List<TsKvEntry> entries) {
      // Chained, not a side branch: the actor hears of the write (and acknowledges it) after the
      // update left. publishIfWatched never throws, so a stored write never turns into a failure.
      return store
          .writeTelemetry(deviceId, entries)
          .thenRun(
              () -> {
                if (watched(deviceId)) {
                  publishIfWatched(new DeviceEvent.TelemetryStored(deviceId, entries));
                }
              });
    }

    @Override
    public CompletionStage<Void> writeAttributes(
        DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
      return store
          .writeAttributes(deviceId, scope, entries, ts)
          .thenRun(
              () -> {
                if (watched(deviceId)) {
                  List<AttributeKvEntry> written = new ArrayList<>(entries.size());
                  entries.forEach(entry -> written.add(new AttributeKvEntry(ts, entry)));
                  publishIfWatched(new DeviceEvent.AttributesUpdated(deviceId, scope, written));
                }
              });
    }

    @Override
    public CompletionStage<List<TsKvEntry>> readLatest(DeviceId deviceId) {
      return store.readLatest(deviceId);
    }

    @Override
    public CompletionStage<Void> deleteAttributes(
        DeviceId deviceId, AttributeScope scope, Set<String> keys) {
      return store.deleteAttributes(deviceId, scope, keys);
    }

    @Override
    public CompletionStage<Void> deleteTelemetry(
        DeviceId deviceId, Set<String> keys, long startTs, long endTs, boolean rewriteLatest) {
      return store.deleteTelemetry(deviceId, keys, startTs, endTs, rewriteLatest);
    }
  }
}
