package io.fieldline.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.feed.DeviceMoves;
import io.fieldline.common.feed.FeedCursor;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.feed.SinkDefinition;
import io.fieldline.common.feed.SinkNodeStatus;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.Delivery;
import io.fieldline.export.sink.Sink;
import io.fieldline.export.sink.SinkFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The exporter's delivery rules, over in-memory stand-ins of its storage ports (the end-to-end
 * tests with Cassandra, Kafka and a webhook receiver are in the server module): order by sequence
 * number across the logs it holds, the other nodes' watermarks, retries, pause.
 */
class ExporterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ExportConfig CONFIG =
      new ExportConfig(
          Duration.ofSeconds(3),
          Duration.ofMillis(100),
          Duration.ofMillis(50),
          100,
          Duration.ofMillis(20),
          Duration.ofMillis(100),
          10,
          Duration.ofSeconds(30));
  private static final DeviceId DEVICE = new DeviceId(UUID.randomUUID());

  private final MemoryFeed feed = new MemoryFeed();
  private final MemorySinks sinks = new MemorySinks();
  private final RecordingSink sink = new RecordingSink();
  private Exporter exporter;
  private DeviceMoves moves = DeviceMoves.NONE;

  @AfterEach
  void close() {
    if (exporter != null) {
      exporter.close();
    }
  }

  @Test
  void should_deliver_every_settled_entry_of_its_own_log_in_order_and_skip_failed_writes() {
    start(log -> false);
    addSink(false);
    feed.append(new DeviceId(new UUID(0, 3)), 999, true); // the warm-up's: never exported
    for (int i = 0; i < 250; i++) {
      feed.append(DEVICE, i, i != 7); // the write of value 7 failed: never delivered
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() == 249);
    assertThat(sink.values()).doesNotContain(7L, 999L).isSorted();
    assertThat(sink.seqs()).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void should_deliver_an_adopted_log_before_newer_entries_of_its_own() {
    // The previous run of this node wrote values 0..49 and died; this run writes 50..99.
    UUID previous = UUID.randomUUID();
    long seq = System.currentTimeMillis() * 1000 - 5_000_000;
    for (int i = 0; i < 50; i++) {
      feed.stored(previous, i + 1, seq + i, DEVICE, i);
    }
    feed.logs.add(new FeedLog(previous, "node", 1, UUID.randomUUID(), Long.MAX_VALUE, 50, false));
    addSink(false, 0); // created before both logs: delivers everything
    for (int i = 50; i < 100; i++) {
      feed.append(DEVICE, i, true);
    }
    start(log -> log.id().equals(previous)); // taken at once, as a restarted single node does
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() >= 100);
    assertThat(sink.values()).containsExactlyElementsOf(range(0, 100));
    await().atMost(Duration.ofSeconds(10)).until(() -> feed.retired.contains(previous));
  }

  @Test
  void should_report_the_age_of_a_backlog_that_is_not_read_yet() {
    // An adopted log of 250 entries written 5 s ago. The first page (100) is delivered, then the
    // read of the rest waits: nothing of it is in memory while 150 entries wait in the feed.
    UUID previous = UUID.randomUUID();
    long seq = (System.currentTimeMillis() - 5_000) * 1000;
    for (int i = 0; i < 250; i++) {
      feed.stored(previous, i + 1, seq + i, DEVICE, i);
    }
    feed.logs.add(new FeedLog(previous, "node", 1, UUID.randomUUID(), Long.MAX_VALUE, 250, false));
    feed.gatedAfter = 100;
    SinkDefinition definition = addSink(false, 0);
    start(log -> log.id().equals(previous));
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() == 100);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              SinkNodeStatus status = sinks.statuses.get(definition.id());
              assertThat(status).isNotNull();
              assertThat(status.lagRecords()).isEqualTo(150);
              assertThat(status.oldestUndeliveredAt())
                  .as("the backlog's age is known while it waits in the feed")
                  .isPositive()
                  .isLessThanOrEqualTo(System.currentTimeMillis() - 4_000);
            });
    feed.gate.complete(null);
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() == 250);
    assertThat(sink.values()).containsExactlyElementsOf(range(0, 250));
  }

  @Test
  void should_hold_a_moved_devices_records_behind_its_former_owner_and_no_others() {
    DeviceId moved = new DeviceId(UUID.randomUUID());
    // The moved device was written by node "other" before the ring changed; DEVICE never moved.
    moves = (device, from, to) -> device.equals(moved) ? Set.of("other", "node") : Set.of("node");
    UUID remote = UUID.randomUUID();
    feed.logs.add(new FeedLog(remote, "other", 1, UUID.randomUUID(), Long.MAX_VALUE, 0, false));
    SinkDefinition definition = addSink(false, 0);
    // The other node reported that it may still deliver entries from seq 1 on.
    feed.cursors.put(
        MemoryFeed.key(definition.id(), remote),
        new FeedCursor(definition.id(), remote, 0, 1, 0, 0));
    start(log -> false);
    feed.append(DEVICE, 2, true);
    feed.append(moved, 1, true);
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(5))
        .until(() -> sink.values().equals(List.of(2L)));
    // It moved on: nothing older than now is left there.
    feed.cursors.put(
        MemoryFeed.key(definition.id(), remote),
        new FeedCursor(definition.id(), remote, 0, Long.MAX_VALUE, 0, 0));
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().equals(List.of(2L, 1L)));
  }

  @Test
  void should_retry_a_failing_receiver_and_deliver_in_order_when_it_recovers() {
    // Failing until the RETRYING status has been seen: a status is a periodic sample, and a few
    // quick failures can be over before one is taken.
    sink.failuresLeft.set(Integer.MAX_VALUE);
    start(log -> false);
    SinkDefinition definition = addSink(false);
    for (int i = 0; i < 20; i++) {
      feed.append(DEVICE, i, true);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> sinks.statuses.values().stream().anyMatch(s -> "RETRYING".equals(s.state())));
    sink.failuresLeft.set(0); // the receiver recovers
    await().atMost(Duration.ofSeconds(10)).until(() -> distinct(sink.values()).size() == 20);
    assertThat(distinct(sink.values())).containsExactlyElementsOf(range(0, 20));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                "RUNNING".equals(sinks.statuses.get(definition.id()).state())
                    && sinks.statuses.get(definition.id()).lastError() != null);
  }

  @Test
  void should_hold_deliveries_while_paused_and_go_on_when_resumed() {
    start(log -> false);
    SinkDefinition paused = addSink(true);
    for (int i = 0; i < 5; i++) {
      feed.append(DEVICE, i, true);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              SinkNodeStatus status = sinks.statuses.get(paused.id());
              return status != null && status.lagRecords() == 5 && "PAUSED".equals(status.state());
            });
    assertThat(sink.values()).isEmpty();
    sinks.definitions.put(paused.id(), with(paused, false));
    exporter.refreshSoon();
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().equals(range(0, 5)));
  }

  @Test
  void should_deliver_again_from_a_time_when_replayed() {
    start(log -> false);
    SinkDefinition definition = addSink(false);
    for (int i = 0; i < 10; i++) {
      feed.append(DEVICE, i, true);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() == 10);
    List<Long> firstSeqs = sink.seqs();

    // What ExportAdmin.replay stores: a new generation, from a time before every entry.
    sinks.definitions.put(
        definition.id(),
        new SinkDefinition(
            definition.id(),
            definition.name(),
            definition.type(),
            definition.filterJson(),
            definition.configurationJson(),
            false,
            definition.createdTime(),
            definition.updatedTime() + 1,
            1,
            definition.generation() + 1));
    exporter.refreshSoon();

    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() == 20);
    assertThat(sink.values().subList(10, 20)).containsExactlyElementsOf(range(0, 10));
    assertThat(sink.seqs().subList(10, 20))
        .as("the same records: a consumer drops them by seq")
        .containsExactlyElementsOf(firstSeqs);
  }

  @Test
  void should_look_up_the_devices_of_a_burst_side_by_side_not_one_after_the_other() {
    // After a start every device is new to the exporter: a thousand devices one lookup at a time
    // held the first records back for about 20 s in the benchmark.
    List<CompletableFuture<Optional<Device>>> lookups = new CopyOnWriteArrayList<>();
    start(
        log -> false,
        id -> {
          CompletableFuture<Optional<Device>> lookup = new CompletableFuture<>();
          lookups.add(lookup);
          return lookup;
        });
    addSink(false);
    List<DeviceId> devices = new ArrayList<>();
    for (int i = 0; i < 15; i++) {
      DeviceId device = new DeviceId(UUID.randomUUID());
      devices.add(device);
      feed.append(device, i, true);
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(lookups).as("lookups started at once").hasSize(15));
    for (int i = 0; i < lookups.size(); i++) {
      lookups.get(i).complete(Optional.of(new Device(devices.get(i), "dev", "meter", null, 0)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> sink.values().size() == 15);
    assertThat(sink.values()).containsExactlyElementsOf(range(0, 15));
  }

  private void start(java.util.function.Predicate<FeedLog> adoptAtOnce) {
    start(
        adoptAtOnce,
        id ->
            CompletableFuture.completedFuture(
                Optional.of(new Device(id, "dev", "meter", null, 0))));
  }

  private void start(
      java.util.function.Predicate<FeedLog> adoptAtOnce,
      java.util.function.Function<DeviceId, CompletionStage<Optional<Device>>> findDevice) {
    exporter =
        new Exporter(
            CONFIG,
            feed,
            sinks,
            feed,
            findDevice,
            List.of(new RecordingFactory(sink)),
            new SimpleMeterRegistry(),
            "node",
            adoptAtOnce,
            moves);
    exporter.start();
  }

  private SinkDefinition addSink(boolean paused) {
    return addSink(paused, System.currentTimeMillis() - 60_000);
  }

  private SinkDefinition addSink(boolean paused, long created) {
    SinkDefinition definition =
        new SinkDefinition(
            UUID.randomUUID(), "s", "TEST", "{}", "{}", paused, created, created, 0, 0);
    sinks.definitions.put(definition.id(), definition);
    return definition;
  }

  private static SinkDefinition with(SinkDefinition old, boolean paused) {
    return new SinkDefinition(
        old.id(),
        old.name(),
        old.type(),
        old.filterJson(),
        old.configurationJson(),
        paused,
        old.createdTime(),
        old.updatedTime() + 1,
        old.replayFrom(),
        old.generation());
  }

  private static List<Long> range(int from, int to) {
    List<Long> values = new ArrayList<>();
    for (long i = from; i < to; i++) {
      values.add(i);
    }
    return values;
  }

  private static List<Long> distinct(List<Long> values) {
    return values.stream().distinct().toList();
  }

  /** A receiver that keeps what it got, after failing a set number of times. */
  private static final class RecordingSink implements Sink {
    final List<JsonNode> records = new CopyOnWriteArrayList<>();
    final AtomicInteger failuresLeft = new AtomicInteger();

    @Override
    public Batching batching() {
      return new Batching(20, 1 << 20, Duration.ZERO, Duration.ofSeconds(5));
    }

    @Override
    public CompletionStage<Delivery> deliver(List<ExportRecord> batch) {
      if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        return CompletableFuture.completedFuture(new Delivery.Retry("HTTP 503: not now"));
      }
      for (ExportRecord record : batch) {
        try {
          records.add(JSON.readTree(record.json()));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
      return CompletableFuture.completedFuture(Delivery.DELIVERED);
    }

    List<Long> values() {
      return records.stream().map(r -> r.at("/values/v").asLong()).toList();
    }

    List<Long> seqs() {
      return records.stream().map(r -> r.get("seq").asLong()).toList();
    }

    @Override
    public void close() {}
  }

  private record RecordingFactory(RecordingSink sink) implements SinkFactory {
    @Override
    public String type() {
      return "TEST";
    }

    @Override
    public ObjectNode validate(ObjectNode configuration, @Nullable ObjectNode previous) {
      return configuration;
    }

    @Override
    public ObjectNode redacted(ObjectNode stored) {
      return stored;
    }

    @Override
    public Set<String> secretFields() {
      return Set.of();
    }

    @Override
    public Sink create(UUID sinkId, String sinkName, ObjectNode stored) {
      return sink;
    }
  }
}
