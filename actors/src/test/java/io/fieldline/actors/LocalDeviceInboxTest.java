package io.fieldline.actors;

import static io.fieldline.actors.TestMessages.WAIT;
import static io.fieldline.actors.TestMessages.actorsConfig;
import static io.fieldline.actors.TestMessages.config;
import static io.fieldline.actors.TestMessages.telemetry;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The gateway end to end over real shards and device actors, with a store the test drives. */
class LocalDeviceInboxTest {

  private static final ActorTestKit TEST_KIT = ActorTestKit.create();

  private final InMemoryTelemetryStore store = new InMemoryTelemetryStore();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final DeviceId deviceId = DeviceId.random();
  private LocalDeviceInbox gateway;

  @AfterEach
  void shutdownGateway() {
    if (gateway != null) {
      gateway.shutdown();
    }
  }

  @AfterAll
  static void shutdownTestKit() {
    TEST_KIT.shutdownTestKit();
  }

  private LocalDeviceInbox start(String overrides) {
    gateway = LocalDeviceInbox.create(TEST_KIT.system(), actorsConfig(overrides), store, registry);
    return gateway;
  }

  private double gauge(String name) {
    return registry.get(name).gauge().value();
  }

  private double counter(String name) {
    return registry.get(name).counter().count();
  }

  @Test
  void should_ack_stored_through_the_device_actor_when_the_write_succeeds() {
    start("");
    CompletionStage<Ack> ack = gateway.submit(telemetry(deviceId, 100, "temp", 21));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    assertThat(ack).isNotDone();

    store.succeed(store.write(0));

    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    assertThat(gateway.latestValues(deviceId))
        .succeedsWithin(WAIT)
        .isEqualTo(Map.of("temp", new TsKvEntry(100, KvEntry.of("temp", 21L))));
    assertThat(gauge(ActorMetrics.ACTORS_ACTIVE)).isEqualTo(1.0);
  }

  @Test
  void should_reject_as_timeout_when_the_store_does_not_answer_within_ack_timeout() {
    start("fieldline.actors.ack-timeout = 200ms");
    CompletionStage<Ack> ack = gateway.submit(telemetry(deviceId, 100, "temp", 21));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);

    assertThat(ack)
        .succeedsWithin(WAIT)
        .isEqualTo(Ack.rejected(Ack.Reason.WRITE_FAILED, "timeout"));
    store.succeed(store.write(0)); // too late: the outcome stays
    assertThat(ack.toCompletableFuture().join().isStored()).isFalse();
    await()
        .atMost(WAIT)
        .until(
            () ->
                registry.get(ActorMetrics.REJECTED).tag("reason", "write_failed").counter().count()
                    == 1.0);
  }

  @Test
  void should_passivate_an_idle_device_and_read_its_stored_values_when_asked_after_it_returns() {
    start("fieldline.actors.passivate-after = 200ms");
    CompletionStage<Ack> first = gateway.submit(telemetry(deviceId, 100, "temp", 21));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(first).succeedsWithin(WAIT);
    assertThat(gauge(ActorMetrics.ACTORS_ACTIVE)).isEqualTo(1.0);

    await().atMost(WAIT).until(() -> gauge(ActorMetrics.ACTORS_ACTIVE) == 0.0);
    assertThat(counter(ActorMetrics.PASSIVATIONS)).isEqualTo(1.0);

    CompletionStage<Ack> second = gateway.submit(telemetry(deviceId, 50, "temp", 5));
    await().atMost(WAIT).until(() -> store.writeCount() == 2);
    assertThat(store.reads(deviceId)).as("no read to write").isZero();
    assertThat(gauge(ActorMetrics.ACTORS_ACTIVE)).isEqualTo(1.0);
    store.succeed(store.write(1));
    assertThat(second).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    // The stored value (ts 100), read on this ask, is newer than the one just written (ts 50).
    assertThat(gateway.latestValues(deviceId))
        .succeedsWithin(WAIT)
        .extracting(values -> values.get("temp").ts())
        .isEqualTo(100L);
  }

  @Test
  void should_answer_latest_values_with_what_was_written_when_the_store_read_hangs() {
    start("fieldline.actors.ack-timeout = 400ms");
    store.holdReads();
    CompletionStage<Ack> written = gateway.submit(telemetry(deviceId, 100, "temp", 21));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(written).succeedsWithin(WAIT);

    // The actor answers before the ask's own timeout gives up.
    assertThat(gateway.latestValues(deviceId))
        .succeedsWithin(WAIT)
        .extracting(values -> values.get("temp").ts())
        .isEqualTo(100L);
  }

  @Test
  void should_stop_a_released_actor_after_its_writes_when_its_device_moved() {
    start("");
    DeviceId kept = DeviceId.random();
    CompletionStage<Ack> inFlight = gateway.submit(telemetry(deviceId, 100, "temp", 21));
    CompletionStage<Ack> other = gateway.submit(telemetry(kept, 100, "temp", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 2);

    gateway.release(deviceId::equals);
    assertThat(inFlight).isNotDone();
    store.succeed(store.write(0));
    store.succeed(store.write(1));
    assertThat(inFlight).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    assertThat(other).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    await().atMost(WAIT).until(() -> gauge(ActorMetrics.ACTORS_ACTIVE) == 1.0);

    CompletionStage<Ack> again = gateway.submit(telemetry(deviceId, 200, "temp", 22));
    await().atMost(WAIT).until(() -> store.writeCount() == 3);
    store.succeed(store.write(2));
    assertThat(again).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    // A fresh actor: it knows only what it wrote until it is asked and reads the store.
    assertThat(gateway.latestValues(deviceId))
        .succeedsWithin(WAIT)
        .extracting(values -> values.get("temp").ts())
        .isEqualTo(200L);
    assertThat(store.reads(deviceId)).isEqualTo(1);
    assertThat(store.reads(kept)).isZero();
  }

  @Test
  void should_drain_in_flight_writes_before_shutdown_completes_when_shutting_down() {
    gateway =
        LocalDeviceInbox.create(config("fieldline.actors.shutdown-timeout = 5s"), store, registry);
    CompletionStage<Ack> a = gateway.submit(telemetry(deviceId, 1, "n", 1));
    DeviceId other = DeviceId.random();
    CompletionStage<Ack> b = gateway.submit(telemetry(other, 1, "n", 2));
    await().atMost(WAIT).until(() -> store.writeCount() == 2);

    CompletionStage<Void> shutdown = gateway.shutdown();
    CompletionStage<Ack> late = gateway.submit(telemetry(deviceId, 2, "n", 3));

    assertThat(late)
        .succeedsWithin(WAIT)
        .isEqualTo(Ack.rejected(Ack.Reason.UNAVAILABLE, "shutting down"));
    assertThat(gateway.latestValues(deviceId)).failsWithin(WAIT);
    assertThat(shutdown).isNotDone();
    store.succeed(store.firstWriteOf(deviceId));
    assertThat(a).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    assertThat(shutdown).isNotDone();
    store.succeed(store.firstWriteOf(other));

    assertThat(shutdown).succeedsWithin(WAIT);
    assertThat(b.toCompletableFuture().join()).isEqualTo(Ack.stored());
    assertThat(gateway.system().getWhenTerminated()).isDone();
    assertThat(registry.getMeters()).isEmpty();
  }

  @Test
  void should_reject_unfinished_writes_as_unavailable_when_the_drain_exceeds_shutdown_timeout() {
    gateway =
        LocalDeviceInbox.create(
            config("fieldline.actors.shutdown-timeout = 300ms"), store, registry);
    CompletionStage<Ack> stuck = gateway.submit(telemetry(deviceId, 1, "n", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);

    assertThat(gateway.shutdown()).succeedsWithin(WAIT);

    assertThat(stuck)
        .succeedsWithin(WAIT)
        .extracting(ack -> ((Ack.Rejected) ack).reason())
        .isEqualTo(Ack.Reason.UNAVAILABLE);
  }

  @Test
  void should_terminate_its_own_actor_system_when_closed() {
    gateway = LocalDeviceInbox.create(config(""), store, registry);
    CompletionStage<Ack> ack = gateway.submit(telemetry(deviceId, 1, "n", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));

    gateway.close();

    assertThat(gateway.system().getWhenTerminated()).isDone();
    assertThat(ack).isCompletedWithValue(Ack.stored());
  }

  @Test
  void should_ack_stored_without_starting_an_actor_when_the_message_is_empty() {
    start("");
    CompletionStage<Ack> ack =
        gateway.submit(new DeviceMessage.PostTelemetry(deviceId, 1, List.of()));

    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
    assertThat(gauge(ActorMetrics.ACTORS_ACTIVE)).isZero();
    assertThat(store.reads(deviceId)).isZero();
  }

  @Test
  void should_pick_a_valid_shard_by_floor_mod_when_the_hash_code_is_negative() {
    // UUID.hashCode folds the 128 bits to (hi ^ lo) of (msb ^ lsb): these give MIN_VALUE and -1.
    DeviceId minHash = new DeviceId(new UUID(0, 0x8000_0000L));
    DeviceId minusOne = new DeviceId(new UUID(0, 0xFFFF_FFFFL));
    assumeThat(minHash.hashCode()).isEqualTo(Integer.MIN_VALUE);
    assumeThat(minusOne.hashCode()).isEqualTo(-1);

    // Math.abs(MIN_VALUE) % 3 would be -2 and Math.abs(-1) % 4 would be 1.
    assertThat(LocalDeviceInbox.shardIndex(minHash, 3)).isEqualTo(1);
    assertThat(LocalDeviceInbox.shardIndex(minusOne, 4)).isEqualTo(3);

    start("fieldline.actors.shards = 3");
    CompletionStage<Ack> ack = gateway.submit(telemetry(minHash, 1, "n", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);
    store.succeed(store.write(0));
    assertThat(ack).succeedsWithin(WAIT).isEqualTo(Ack.stored());
  }

  @Test
  void should_never_tag_meters_by_device_when_registering() {
    start("");
    gateway.submit(telemetry(deviceId, 1, "n", 1));
    await().atMost(WAIT).until(() -> store.writeCount() == 1);

    assertThat(registry.getMeters())
        .extracting(meter -> meter.getId().getName())
        .containsOnly(
            ActorMetrics.ACTORS_ACTIVE,
            ActorMetrics.WRITES_INFLIGHT,
            ActorMetrics.REJECTED,
            ActorMetrics.PASSIVATIONS);
    assertThat(registry.getMeters())
        .flatExtracting(meter -> meter.getId().getTags())
        .allSatisfy(tag -> assertThat(tag.getKey()).isEqualTo(ActorMetrics.REASON));
    assertThat(gauge(ActorMetrics.WRITES_INFLIGHT)).isEqualTo(1.0);
    assertThat(registry.find(ActorMetrics.REJECTED).meters()).hasSize(Ack.Reason.values().length);
  }
}
