package io.fieldline.fleet.live;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvents;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.TelemetryStore;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Who watches what, and what the publishing store tells whom. */
class LiveDataTest {

  private final LocalDeviceEvents local = new LocalDeviceEvents();
  private final List<DeviceEvent> everything = new CopyOnWriteArrayList<>();
  private long now = 0;
  private final LiveData live = new LiveData("node-a", local, Duration.ofSeconds(30), () -> now);
  private final TelemetryStore store = live.publishing(new AcceptingStore());
  private final DeviceId device = new DeviceId(UUID.randomUUID());

  LiveDataTest() {
    local.subscribeAll(
        event -> {
          everything.add(event);
          return false;
        });
  }

  private void write(long ts) {
    store
        .writeTelemetry(device, List.of(new TsKvEntry(ts, KvEntry.of("t", ts))))
        .toCompletableFuture()
        .join();
  }

  private List<DeviceEvent> of(Class<? extends DeviceEvent> type) {
    return everything.stream().filter(type::isInstance).toList();
  }

  @Test
  void should_publish_nothing_when_nobody_watches_the_device() {
    write(1);
    store
        .writeAttributes(device, AttributeScope.CLIENT_SCOPE, List.of(KvEntry.of("fw", "1")), 1)
        .toCompletableFuture()
        .join();

    assertThat(everything).isEmpty();
  }

  @Test
  void should_publish_what_was_stored_while_watched_and_announce_the_first_and_last_watch_only() {
    List<DeviceEvent> heard = new CopyOnWriteArrayList<>();
    DeviceEvents.Subscription first =
        live.watch(
            device,
            event -> {
              heard.add(event);
              return true;
            });
    DeviceEvents.Subscription second = live.watch(device, event -> false);
    write(1);
    store
        .writeAttributes(device, AttributeScope.CLIENT_SCOPE, List.of(KvEntry.of("fw", "1")), 5)
        .toCompletableFuture()
        .join();
    first.close();
    first.close();
    assertThat(live.watched(device)).as("one watch left").isTrue();
    second.close();
    write(2);

    assertThat(of(DeviceEvent.DataWatched.class))
        .extracting(e -> ((DeviceEvent.DataWatched) e).watched())
        .containsExactly(true, false);
    assertThat(of(DeviceEvent.DataWatched.class))
        .allSatisfy(e -> assertThat(((DeviceEvent.DataWatched) e).nodeId()).startsWith("node-a/"));
    assertThat(of(DeviceEvent.TelemetryStored.class))
        .containsExactly(
            new DeviceEvent.TelemetryStored(
                device, List.of(new TsKvEntry(1, KvEntry.of("t", 1L)))));
    assertThat(heard).filteredOn(DeviceEvent.AttributesUpdated.class::isInstance).hasSize(1);
    assertThat(live.watched(device)).isFalse();
    assertThat(live.devicesWatchedHere()).isZero();
  }

  @Test
  void should_publish_for_a_device_another_node_watches_until_that_node_leaves() {
    local.deliver(new DeviceEvent.DataWatched(device, "node-b/1", true));
    write(1);
    assertThat(of(DeviceEvent.TelemetryStored.class)).hasSize(1);

    live.membersChanged(Set.of("node-a", "node-c"));
    write(2);

    assertThat(of(DeviceEvent.TelemetryStored.class)).as("node-b is gone").hasSize(1);
  }

  @Test
  void should_announce_its_own_watches_again_when_the_members_change() {
    LiveData.Watch watch = live.watch(device, event -> false);
    assertThat(watch.ready()).isCompleted();
    everything.clear();

    live.membersChanged(Set.of("node-a", "node-b"));

    assertThat(everything).hasSize(1);
    assertThat(((DeviceEvent.DataWatched) everything.get(0)).watched()).isTrue();
    assertThat(live.watched(device)).isTrue();
    watch.close();
  }

  @Test
  void should_forget_a_remote_watch_when_it_was_not_announced_for_three_refreshes() {
    local.deliver(new DeviceEvent.DataWatched(device, "node-b/1", true));
    now += Duration.ofSeconds(60).toNanos();
    live.refresh();
    assertThat(live.watched(device)).as("announced 60 s ago").isTrue();

    now += Duration.ofSeconds(31).toNanos();
    live.refresh();

    assertThat(live.watched(device)).as("announced 91 s ago").isFalse();
  }

  @Test
  void should_drop_the_watches_of_a_former_incarnation_when_a_node_restarted_under_its_id() {
    DeviceId other = new DeviceId(UUID.randomUUID());
    local.deliver(new DeviceEvent.DataWatched(device, "node-b/old", true));
    local.deliver(new DeviceEvent.DataWatched(other, "node-b/new", true));

    assertThat(live.watched(device)).as("only the old incarnation watched it").isFalse();
    assertThat(live.watched(other)).isTrue();
  }

  /** Completes every write at once; reads nothing. */
  private static final class AcceptingStore implements TelemetryStore {
    @Override
    public CompletionStage<Void> writeTelemetry(DeviceId deviceId, List<TsKvEntry> entries) {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> writeAttributes(
        DeviceId deviceId, AttributeScope scope, List<KvEntry> entries, long ts) {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<List<TsKvEntry>> readLatest(DeviceId deviceId) {
      return CompletableFuture.completedFuture(List.of());
    }

    @Override
    public CompletionStage<Void> deleteAttributes(
        DeviceId deviceId, AttributeScope scope, Set<String> keys) {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<Void> deleteTelemetry(
        DeviceId deviceId, Set<String> keys, long startTs, long endTs, boolean rewriteLatest) {
      return CompletableFuture.completedFuture(null);
    }
  }
}
