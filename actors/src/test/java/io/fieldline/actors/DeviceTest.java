package io.fieldline.actors;

import static io.fieldline.actors.TestMessages.WAIT;
import static io.fieldline.actors.TestMessages.actorsConfig;
import static io.fieldline.actors.TestMessages.attributes;
import static io.fieldline.actors.TestMessages.telemetry;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The device actor alone, with a probe as its shard and a store the test drives. */
class DeviceTest {

  private static final ActorTestKit TEST_KIT = ActorTestKit.create();

  private final InMemoryTelemetryStore store = new InMemoryTelemetryStore();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ActorMetrics metrics = new ActorMetrics(registry);
  private final DeviceId deviceId = DeviceId.random();
  private TestProbe<DeviceShard.Command> shard;

  @BeforeEach
  void createShardProbe() {
    shard = TEST_KIT.createTestProbe(DeviceShard.Command.class);
  }

  @AfterAll
  static void shutdown() {
    TEST_KIT.shutdownTestKit();
  }

  private ActorRef<Device.Command> spawn(ActorsConfig config) {
    return TEST_KIT.spawn(Device.create(deviceId, store, config, metrics, shard.getRef()));
  }

  private ActorRef<Device.Command> spawn() {
    return spawn(actorsConfig(""));
  }

  private static CompletableFuture<Ack> record(
      ActorRef<Device.Command> device, DeviceMessage message) {
    CompletableFuture<Ack> ack = new CompletableFuture<>();
    device.tell(new Device.RecordMessage(message, ack));
    return ack;
  }

  /**
   * The device's latest values; since the device answers in order, everything sent before is
   * processed.
   */
  private static Map<String, TsKvEntry> latest(ActorRef<Device.Command> device) {
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));
    return probe.receiveMessage(WAIT).values();
  }

  private double rejected(Ack.Reason reason) {
    return registry
        .get(ActorMetrics.REJECTED)
        .tag(ActorMetrics.REASON, reason.name().toLowerCase())
        .counter()
        .count();
  }

  @Test
  void should_ack_stored_only_after_the_store_completes_when_the_write_succeeds() {
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 100, "temp", 21));
    latest(device);

    assertThat(store.writeCount()).isEqualTo(1);
    assertThat(store.write(0).entries()).hasSize(1);
    assertThat(ack).isNotDone();

    store.succeed(store.write(0));
    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
  }

  @Test
  void should_reject_as_write_failed_with_the_cause_kind_when_the_write_fails() {
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 100, "temp", 21));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);

    store.fail(store.write(0), StoreException.Kind.TIMEOUT);

    assertThat(ack)
        .succeedsWithin(WAIT)
        .isEqualTo(Ack.rejected(Ack.Reason.WRITE_FAILED, "TIMEOUT"));
    await().atMost(WAIT).until(() -> rejected(Ack.Reason.WRITE_FAILED) == 1.0);
    assertThat(latest(device)).isEmpty();
  }

  @Test
  void should_not_start_the_65th_write_until_one_completes_when_64_are_in_flight() {
    ActorRef<Device.Command> device = spawn();
    List<CompletableFuture<Ack>> acks = new ArrayList<>();
    for (int i = 0; i < 65; i++) {
      acks.add(record(device, telemetry(deviceId, 1000 + i, "n", i)));
    }
    latest(device);

    assertThat(store.writeCount()).isEqualTo(64);
    assertThat(metrics.inflightWrites()).isEqualTo(64);
    assertThat(acks.get(64)).isNotDone();

    store.succeed(store.write(0));
    await().atMost(WAIT).until(() -> store.writeCount() == 65);
    assertThat(List.<Object>copyOf(store.write(64).entries()))
        .containsExactly(new TsKvEntry(1064, KvEntry.of("n", 64L)));
    assertThat(acks.get(0)).succeedsWithin(WAIT).isEqualTo(Ack.stored());
  }

  @Test
  void should_reject_as_overloaded_at_once_when_the_stash_is_full() {
    ActorRef<Device.Command> device = spawn(actorsConfig("").withBounds(1, 2));
    CompletableFuture<Ack> first = record(device, telemetry(deviceId, 1, "n", 1));
    CompletableFuture<Ack> second = record(device, telemetry(deviceId, 2, "n", 2));
    CompletableFuture<Ack> third = record(device, telemetry(deviceId, 3, "n", 3));
    CompletableFuture<Ack> fourth = record(device, telemetry(deviceId, 4, "n", 4));

    assertThat(fourth)
        .succeedsWithin(WAIT)
        .isEqualTo(Ack.rejected(Ack.Reason.OVERLOADED, "device stash full"));
    await().atMost(WAIT).until(() -> rejected(Ack.Reason.OVERLOADED) == 1.0);
    assertThat(store.writeCount()).isEqualTo(1);
    assertThat(List.of(first, second, third)).noneMatch(CompletableFuture::isDone);

    store.succeed(store.write(0));
    await().atMost(WAIT).until(() -> store.writeCount() == 2);
    store.succeed(store.write(1));
    await().atMost(WAIT).until(() -> store.writeCount() == 3);
    store.succeed(store.write(2));
    assertThat(third).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    assertThat(List.of(first, second)).allMatch(ack -> ack.join().isStored());
  }

  @Test
  void should_update_latest_only_on_success_and_never_regress_when_an_older_value_arrives() {
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> newer = record(device, telemetry(deviceId, 200, "temp", 2));
    CompletableFuture<Ack> older = record(device, telemetry(deviceId, 100, "temp", 1));
    CompletableFuture<Ack> failed = record(device, telemetry(deviceId, 300, "temp", 3));
    await().atMost(WAIT).until(() -> store.writeCount() == 3);
    assertThat(latest(device)).isEmpty(); // nothing before the store confirms

    store.succeed(store.write(0));
    store.succeed(store.write(1));
    store.fail(store.write(2), StoreException.Kind.UNAVAILABLE);
    assertThat(List.of(newer, older, failed))
        .allSatisfy(ack -> assertThat(ack).succeedsWithin(WAIT));

    assertThat(latest(device))
        .containsExactly(Map.entry("temp", new TsKvEntry(200, KvEntry.of("temp", 2L))));
  }

  @Test
  void should_write_at_once_and_never_read_the_store_when_nobody_asks_for_latest_values() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> first = record(device, telemetry(deviceId, 100, "temp", 1));
    CompletableFuture<Ack> second = record(device, telemetry(deviceId, 200, "temp", 2));

    await().atMost(WAIT).until(() -> store.writeCount() == 2);
    store.succeed(store.write(0));
    store.succeed(store.write(1));

    assertThat(List.of(first, second)).allSatisfy(ack -> assertThat(ack).succeedsWithin(WAIT));
    assertThat(store.reads(deviceId)).isZero();
  }

  @Test
  void should_read_stored_latest_values_once_on_the_first_ask_and_keep_newer_written_ones() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> written = record(device, telemetry(deviceId, 600, "temp", 6));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(written).succeedsWithin(WAIT);
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));
    await().atMost(WAIT).until(() -> store.pendingReads() == 1);

    TsKvEntry storedTemp = new TsKvEntry(500, KvEntry.of("temp", 5L));
    TsKvEntry humidity = new TsKvEntry(400, KvEntry.of("hum", 40L));
    store.completeRead(List.of(storedTemp, humidity));

    // The value written since start is newer than the stored one and wins.
    TsKvEntry writtenTemp = new TsKvEntry(600, KvEntry.of("temp", 6L));
    assertThat(probe.receiveMessage(WAIT).values())
        .containsOnly(Map.entry("temp", writtenTemp), Map.entry("hum", humidity));
    assertThat(latest(device))
        .containsOnly(Map.entry("temp", writtenTemp), Map.entry("hum", humidity));
    assertThat(store.reads(deviceId)).isEqualTo(1);
  }

  @Test
  void should_answer_with_values_written_since_start_and_read_again_when_the_read_fails() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 100, "temp", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));
    await().atMost(WAIT).until(() -> store.pendingReads() == 1);

    store.failRead(new StoreException(StoreException.Kind.UNAVAILABLE, "injected"));

    assertThat(probe.receiveMessage(WAIT).values()).containsOnlyKeys("temp");
    device.tell(new Device.GetLatest(probe.getRef()));
    await().atMost(WAIT).until(() -> store.reads(deviceId) == 2);
  }

  @Test
  void should_answer_askers_when_the_read_outlasts_ack_timeout_and_merge_it_when_it_completes() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn(actorsConfig("fieldline.actors.ack-timeout = 200ms"));
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 100, "temp", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));

    assertThat(probe.receiveMessage(WAIT).values().get("temp").ts()).isEqualTo(100);

    store.completeRead(List.of(new TsKvEntry(500, KvEntry.of("temp", 5L)))); // late: still used
    await().atMost(WAIT).until(() -> latest(device).get("temp").ts() == 500);
    assertThat(store.reads(deviceId)).isEqualTo(1);
  }

  @Test
  void should_answer_at_once_while_an_overdue_read_still_runs() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn(actorsConfig("fieldline.actors.ack-timeout = 200ms"));
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));
    probe.receiveMessage(WAIT); // answered when the read became overdue

    device.tell(new Device.GetLatest(probe.getRef()));

    assertThat(probe.receiveMessage(WAIT).values()).isEmpty();
    assertThat(store.reads(deviceId)).isEqualTo(1);
  }

  @Test
  void should_keep_a_written_value_when_the_read_returns_the_same_timestamp() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn();
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));
    await().atMost(WAIT).until(() -> store.pendingReads() == 1);
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 500, "temp", 7));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(ack).succeedsWithin(WAIT);

    // A read issued before the write may still hold the old cell of that timestamp.
    store.completeRead(List.of(new TsKvEntry(500, KvEntry.of("temp", 5L))));

    assertThat(probe.receiveMessage(WAIT).values().get("temp").kv())
        .isEqualTo(KvEntry.of("temp", 7L));
  }

  @Test
  void should_write_client_scope_attributes_at_receive_time_when_attributes_are_posted() {
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> ack = record(device, attributes(deviceId, 777, "fw"));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);

    InMemoryTelemetryStore.Write write = store.write(0);
    assertThat(write.scope()).isEqualTo(AttributeScope.CLIENT_SCOPE);
    assertThat(write.ts()).isEqualTo(777);
    assertThat(List.<Object>copyOf(write.entries())).containsExactly(KvEntry.of("fw", "v1"));
    assertThat(ack).isNotDone();
    store.succeed(write);
    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    assertThat(latest(device)).isEmpty(); // latest values are time series only
  }

  @Test
  void should_ack_stored_without_io_when_the_message_is_empty() {
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> ack =
        record(device, new DeviceMessage.PostTelemetry(deviceId, 1, List.of()));

    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    latest(device);
    assertThat(store.writeCount()).isZero();
  }

  @Test
  void should_ask_its_shard_to_passivate_it_when_idle() {
    ActorRef<Device.Command> device =
        spawn(actorsConfig("fieldline.actors.passivate-after = 100ms"));

    DeviceShard.Passivate request = shard.expectMessageClass(DeviceShard.Passivate.class, WAIT);

    assertThat(request).isEqualTo(new DeviceShard.Passivate(deviceId, device));
  }

  @Test
  void should_stay_while_messages_arrive_more_often_than_passivate_after_and_go_within_1_5x_idle() {
    Duration passivateAfter = Duration.ofSeconds(1);
    ActorRef<Device.Command> device = spawn(actorsConfig("fieldline.actors.passivate-after = 1s"));

    // 1.5 times passivate-after with a message every 100 ms: never idle for two whole checks.
    for (int i = 0; i < 15; i++) {
      assertThat(record(device, new DeviceMessage.PostTelemetry(deviceId, i, List.of())))
          .succeedsWithin(WAIT);
      shard.expectNoMessage(Duration.ofMillis(100));
    }
    long lastMessage = System.nanoTime();
    assertThat(record(device, new DeviceMessage.PostTelemetry(deviceId, 99, List.of())))
        .succeedsWithin(WAIT);

    // Idle checks are not activity: the device goes after passivate-after to 1.5 times it.
    DeviceShard.Passivate request = shard.expectMessageClass(DeviceShard.Passivate.class, WAIT);
    Duration idle = Duration.ofNanos(System.nanoTime() - lastMessage);
    assertThat(request).isEqualTo(new DeviceShard.Passivate(deviceId, device));
    assertThat(idle)
        .as("idle time before the passivation request")
        .isGreaterThanOrEqualTo(passivateAfter.multipliedBy(9).dividedBy(10))
        // 1.5 × passivate-after by design; twice that plus a second leaves room for a loaded
        // machine's timer and mailbox delays (an idle check counted as activity would never end)
        .isLessThanOrEqualTo(passivateAfter.multipliedBy(2).plusSeconds(1));
  }

  @Test
  void should_not_passivate_with_a_write_in_flight_and_passivate_once_idle_after_it_completed() {
    ActorRef<Device.Command> device =
        spawn(actorsConfig("fieldline.actors.passivate-after = 100ms"));
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 100, "temp", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);

    shard.expectNoMessage(Duration.ofMillis(400)); // four times passivate-after, write in flight

    long completed = System.nanoTime();
    store.succeed(store.write(0));
    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    DeviceShard.Passivate request = shard.expectMessageClass(DeviceShard.Passivate.class, WAIT);
    assertThat(request).isEqualTo(new DeviceShard.Passivate(deviceId, device));
    assertThat(Duration.ofNanos(System.nanoTime() - completed))
        .as("the write's completion is activity")
        .isGreaterThanOrEqualTo(Duration.ofMillis(90));
  }

  @Test
  void should_stop_only_after_in_flight_writes_complete_when_told_to_stop() {
    ActorRef<Device.Command> device = spawn();
    CompletableFuture<Ack> ack = record(device, telemetry(deviceId, 100, "temp", 1));
    device.tell(Device.Stop.INSTANCE);
    latest(device); // still alive after processing Stop

    store.succeed(store.write(0));

    shard.expectTerminated(device, WAIT);
    assertThat(ack.join()).isEqualTo(Ack.stored());
  }

  @Test
  void should_reject_waiting_messages_and_read_again_on_the_next_ask_when_the_device_restarts() {
    store.holdReads();
    ActorRef<Device.Command> device = spawn(actorsConfig("").withBounds(1, 8));
    CompletableFuture<Ack> inFlight = record(device, telemetry(deviceId, 100, "temp", 1));
    CompletableFuture<Ack> waiting = record(device, telemetry(deviceId, 200, "temp", 2));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    TestProbe<Device.LatestReported> probe = TEST_KIT.createTestProbe(Device.LatestReported.class);
    device.tell(new Device.GetLatest(probe.getRef()));
    await().atMost(WAIT).until(() -> store.pendingReads() == 1);

    store.completeRead(Arrays.asList((TsKvEntry) null)); // the actor throws on it

    assertThat(waiting)
        .succeedsWithin(WAIT)
        .isEqualTo(Ack.rejected(Ack.Reason.WRITE_FAILED, "device actor restarted"));
    assertThat(probe.receiveMessage(WAIT).values()).as("the asker answered on restart").isEmpty();
    // The write in flight completes into the restarted actor and is acknowledged.
    store.succeed(store.write(0));
    assertThat(inFlight).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    device.tell(new Device.GetLatest(probe.getRef()));
    await().atMost(WAIT).until(() -> store.reads(deviceId) == 2);
    store.completeRead(List.of());
    assertThat(probe.receiveMessage(WAIT).values()).containsOnlyKeys("temp");
  }
}
