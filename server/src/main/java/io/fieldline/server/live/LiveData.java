package io.fieldline.server.live;

import io.fieldline.common.AttributeKvEntry;
import io.fieldline.common.AttributeScope;
import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TelemetryStore;
import io.fieldline.common.TsKvEntry;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who watches which device's data, across the cluster, and the publishing of that data once stored:
 * the bridge between the device actors' writes and live subscriptions (the WebSocket API).
 *
 * <p>Publishing every stored message as an event would cost every message a trip to every node,
 * although almost no device is watched at any moment. So a node announces, as a {@link
 * DeviceEvent.DataWatched} event on the ordinary event path, when it starts watching a device (its
 * first live subscription to it) and when it stops (its last); every node keeps the set of watching
 * nodes per device, and the node that stores a device's data ({@link #publishing(TelemetryStore)},
 * the store the device actors write through) publishes {@link DeviceEvent.TelemetryStored} and
 * client {@link DeviceEvent.AttributesUpdated} events only for watched devices. The event goes out
 * when the write completed, before the device's acknowledgement: a subscriber never sees a value
 * that is not stored.
 *
 * <p>Membership: when the cluster's members change, {@link #membersChanged} forgets the watches of
 * nodes that left and announces this node's own watches again (a node that joined, or one that now
 * owns a device and stores its data, learns them). Between a node's loss and that announcement,
 * data stored for a watched device may not be published; subscribers see the next value.
 *
 * <p>Thread-safe. Until {@link #useEvents} is called (the cluster tier starts after the device
 * tier), events stay on this node.
 */
public final class LiveData implements DeviceEventListener {

  private static final Logger LOG = LoggerFactory.getLogger(LiveData.class);

  private final String selfId;
  private final LocalDeviceEvents local;
  private volatile DeviceEvents events;

  /**
   * This node's live subscriptions per device; guarded by itself (watching is rare, and the
   * announcements of one device must go out in the order its counts changed).
   */
  private final Map<DeviceId, Integer> ownWatches = new HashMap<>();

  /** Every node (this one included) watching each device. */
  private final Map<DeviceId, Set<String>> watchers = new ConcurrentHashMap<>();

  /**
   * @param selfId this node's id (any constant on a single node)
   * @param local this node's listeners; remote {@code DataWatched} events arrive there
   */
  public LiveData(String selfId, LocalDeviceEvents local) {
    this.selfId = selfId;
    this.local = local;
    this.events = local;
    local.subscribeAll(this);
  }

  /**
   * Publishes through {@code clusterEvents} from now on (this node's listeners and every other).
   */
  public void useEvents(DeviceEvents clusterEvents) {
    this.events = clusterEvents;
  }

  /**
   * Registers {@code listener} for the events of {@code device} (its stored data included) until
   * the returned subscription is closed.
   */
  public DeviceEvents.Subscription watch(DeviceId device, DeviceEventListener listener) {
    DeviceEvents.Subscription subscription = local.subscribe(device, listener);
    synchronized (ownWatches) {
      if (ownWatches.merge(device, 1, Integer::sum) == 1) {
        announce(device, true);
      }
    }
    return new DeviceEvents.Subscription() {
      private boolean closed;

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
      if (ownWatches.containsKey(device)
          && ownWatches.computeIfPresent(device, (d, count) -> count == 1 ? null : count - 1)
              == null) {
        announce(device, false);
      }
    }
  }

  private void announce(DeviceId device, boolean watched) {
    DeviceEvent.DataWatched event = new DeviceEvent.DataWatched(device, selfId, watched);
    // Applied here at once (the local delivery of publish does it too; applying twice is
    // harmless): this node's own writes must be published from the next one on.
    apply(event);
    events.publish(event);
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
    if (event.watched()) {
      watchers
          .computeIfAbsent(event.deviceId(), d -> ConcurrentHashMap.newKeySet())
          .add(event.nodeId());
    } else {
      watchers.computeIfPresent(
          event.deviceId(),
          (d, nodes) -> {
            nodes.remove(event.nodeId());
            return nodes.isEmpty() ? null : nodes;
          });
    }
  }

  /**
   * The cluster's members changed to {@code members}: forgets the watches of nodes no longer among
   * them and announces this node's own watches again.
   */
  public void membersChanged(Collection<String> members) {
    Set<String> alive = Set.copyOf(members);
    for (DeviceId device : List.copyOf(watchers.keySet())) {
      watchers.computeIfPresent(
          device,
          (d, nodes) -> {
            nodes.removeIf(node -> !node.equals(selfId) && !alive.contains(node));
            return nodes.isEmpty() ? null : nodes;
          });
    }
    synchronized (ownWatches) {
      LOG.debug(
          "[live] members now {}: announcing {} watched devices again", alive, ownWatches.size());
      ownWatches.keySet().forEach(device -> announce(device, true));
    }
  }

  /**
   * {@code store}, publishing what it stored for watched devices once each write completed: the
   * store to hand the device actors.
   */
  public TelemetryStore publishing(TelemetryStore store) {
    return new PublishingStore(store);
  }

  private final class PublishingStore implements TelemetryStore {

    private final TelemetryStore store;

    PublishingStore(TelemetryStore store) {
      this.store = store;
    }

    @Override
    public CompletionStage<Void> writeTelemetry(DeviceId deviceId, List<TsKvEntry> entries) {
      return store
          .writeTelemetry(deviceId, entries)
          .thenRun(
              () -> {
                if (watched(deviceId)) {
                  events.publish(new DeviceEvent.TelemetryStored(deviceId, entries));
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
                  events.publish(new DeviceEvent.AttributesUpdated(deviceId, scope, written));
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
