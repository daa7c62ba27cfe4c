package io.fieldline.dao.cassandra.feed;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.Row;
import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.telemetry.write.CassandraTelemetryStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link CassandraTelemetryStore} writing the change feed: one feed row per stored message, in the
 * message's batch or after all of it, and every position settled, as failed when the write failed.
 */
class FeedTelemetryStoreIT extends CassandraTestBase {

  private static final long T0 = 1_700_000_000_000L;

  private CassandraFeedStore feedStore;

  @BeforeAll
  void createFeedStore() {
    feedStore = new CassandraFeedStore(session, keyspace, config.writeConsistency(), 3_600);
  }

  private FeedWriter writer(int memoryEntries) {
    return new FeedWriter(
        session,
        keyspace,
        new FeedConfig(true, Duration.ofHours(1), memoryEntries, "node-it"),
        config.writeConsistency(),
        15_000,
        System::currentTimeMillis);
  }

  private CassandraConfig configWith(String settings) {
    return CassandraConfig.from(ConfigFactory.parseString(settings).withFallback(root).resolve());
  }

  private CassandraTelemetryStore store(
      CassandraConfig cassandra, WriteLimiter limiter, FeedWriter feed) {
    return new CassandraTelemetryStore(session, cassandra, limiter, registry, feed);
  }

  // Takes the limiter's only slot until the returned future is completed.
  private static CompletableFuture<Void> occupy(WriteLimiter limiter) {
    CompletableFuture<Void> blocker = new CompletableFuture<>();
    limiter.submit(() -> blocker);
    return blocker;
  }

  private static List<TsKvEntry> message(int keys, long ts) {
    List<TsKvEntry> values = new ArrayList<>();
    for (int i = 0; i < keys; i++) {
      values.add(new TsKvEntry(ts, KvEntry.of("key-" + i, (long) i)));
    }
    return values;
  }

  /** Positions of the log's feed rows with their write times (all in block 0 here). */
  private List<long[]> feedRows(UUID log) {
    List<long[]> rows = new ArrayList<>();
    for (Row row :
        session.execute(
            "SELECT pos, writetime(body) FROM " + keyspace + ".feed WHERE log = ? AND block = 0",
            log)) {
      rows.add(new long[] {row.getLong(0), row.getLong(1)});
    }
    return rows;
  }

  private List<Long> dataWriteTimes(DeviceId device) {
    List<Long> times = new ArrayList<>();
    for (Row row :
        session.execute(
            "SELECT writetime(long_v) FROM "
                + keyspace
                + ".ts_kv WHERE device_id = ? ALLOW FILTERING",
            device.value())) {
      times.add(row.getLong(0));
    }
    return times;
  }

  private static StoreException.Kind failureKind(CompletableFuture<Void> write) {
    assertThat(write).failsWithin(TIMEOUT);
    try {
      write.get();
      throw new AssertionError("not failed");
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(StoreException.class);
      return ((StoreException) e.getCause()).kind();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  private static List<Long> positions(LocalFeed.Tail tail) {
    return tail.entries().stream().map(FeedEntry::position).toList();
  }

  @Test
  void should_write_the_feed_row_in_the_same_batch_when_the_message_fits_one() {
    FeedWriter feed = writer(1024);
    CassandraTelemetryStore store = store(config, new WriteLimiter(8, 100), feed);
    DeviceId device = DeviceId.random();

    await(store.writeTelemetry(device, message(3, T0)));

    List<long[]> rows = feedRows(feed.logId());
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0)[0]).isEqualTo(1);
    assertThat(dataWriteTimes(device))
        .as("one batch, one write time")
        .hasSize(3)
        .containsOnly(rows.get(0)[1]);
    assertThat(feed.settledPosition()).isEqualTo(1);
    assertThat(positions(feed.tail(0, 10))).containsExactly(1L);
  }

  @Test
  void should_fail_a_write_completing_after_the_feed_lease_ran_out_and_go_on_in_a_new_log() {
    // This process was frozen, or cut off from Cassandra, past its lease while a write was in
    // flight: another may have adopted the log and read it to its end. The write is stored but
    // must not be acknowledged.
    FeedWriter feed = writer(1024);
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = store(config, limiter, feed);
    DeviceId device = DeviceId.random();
    UUID fencedLog = feed.logId();
    feed.leaseHeld(fencedLog, System.currentTimeMillis() + 60_000);
    CompletableFuture<Void> inFlight =
        store.writeTelemetry(device, message(1, T0)).toCompletableFuture();

    feed.leaseHeld(fencedLog, System.currentTimeMillis() - 1); // the lease ran out meanwhile
    blocker.complete(null);

    assertThat(failureKind(inFlight)).isEqualTo(StoreException.Kind.UNAVAILABLE);
    assertThat(feed.fenced()).isEqualTo(1);
    assertThat(feed.logId()).as("later entries go to a new log").isNotEqualTo(fencedLog);
    // The device's resend: acknowledged, in the new log (no lease on it yet: no fence).
    await(store.writeTelemetry(device, message(1, T0)));
    assertThat(positions(feed.tail(0, 10))).containsExactly(1L);
    assertThat(feed.fenced()).isEqualTo(1);
  }

  @Test
  void should_append_to_a_new_log_once_the_fence_passed_without_a_renewal() {
    // Cut off from Cassandra longer than the lease, then back: new messages are not fenced.
    FeedWriter feed = writer(1024);
    CassandraTelemetryStore store = store(config, new WriteLimiter(8, 100), feed);
    UUID fencedLog = feed.logId();
    feed.leaseHeld(fencedLog, System.currentTimeMillis() - 1);

    await(store.writeTelemetry(DeviceId.random(), message(1, T0)));

    assertThat(feed.logId()).isNotEqualTo(fencedLog);
    assertThat(feed.fenced()).isZero();
    assertThat(feedRows(feed.logId())).extracting(row -> row[0]).containsExactly(1L);
  }

  @Test
  void
      should_write_exactly_one_feed_row_after_all_the_data_when_the_message_does_not_fit_a_batch() {
    // 60 values, 60 key index rows and a partition row: 121 statements, beyond a coalesced batch
    // of 20 and an own batch of 100, so the data goes as batches of its own first.
    CassandraConfig small = configWith("fieldline.cassandra.coalesce.max-batch-statements = 20");
    FeedWriter feed = writer(1024);
    CassandraTelemetryStore store = store(small, new WriteLimiter(8, 100), feed);
    DeviceId device = DeviceId.random();
    List<TsKvEntry> values = message(60, T0);

    await(store.writeTelemetry(device, values));

    List<long[]> rows = feedRows(feed.logId());
    assertThat(rows).hasSize(1);
    List<Long> dataTimes = dataWriteTimes(device);
    assertThat(dataTimes).hasSize(60);
    assertThat(rows.get(0)[1])
        .as("the feed row is written after the last data batch answered")
        .isGreaterThan(dataTimes.stream().mapToLong(Long::longValue).max().orElseThrow());
    List<FeedEntry> read = await(feedStore.read(feed.logId(), 0, 10));
    assertThat(read).hasSize(1);
    assertThat(((FeedEntry.Telemetry) read.get(0)).entries()).isEqualTo(values);
    assertThat(feed.settledPosition()).isEqualTo(1);
  }

  @Test
  void should_settle_as_failed_and_write_no_feed_row_when_the_data_of_a_large_message_fails() {
    CassandraConfig small = configWith("fieldline.cassandra.coalesce.max-batch-statements = 20");
    FeedWriter feed = writer(1024);
    WriteLimiter limiter = new WriteLimiter(1, 0);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = store(small, limiter, feed);
    DeviceId device = DeviceId.random();

    CompletableFuture<Void> refused =
        store.writeTelemetry(device, message(60, T0)).toCompletableFuture();

    assertThat(failureKind(refused)).isEqualTo(StoreException.Kind.OVERLOADED);
    assertThat(feed.settledPosition()).isEqualTo(1);
    LocalFeed.Tail tail = feed.tail(0, 10);
    assertThat(tail.entries()).isEmpty();
    assertThat(tail.through()).isEqualTo(1);

    blocker.complete(null);
    // The same feed log, through a store whose limiter lets every batch of the message queue.
    await(store(small, new WriteLimiter(8, 100), feed).writeTelemetry(device, message(60, T0)));

    assertThat(feedRows(feed.logId())).extracting(row -> row[0]).containsExactly(2L);
    assertThat(positions(feed.tail(0, 10))).containsExactly(2L);
  }

  @Test
  void should_keep_a_full_coalesced_batch_of_small_messages_under_cassandras_size_limit() {
    // One key per message: a data row and a feed row each, the feed row's real size in
    // Cassandra's count dominated by its fixed part. Counted too small (48 bytes beyond the body),
    // a batch filled to max-batch-bytes went over batch_size_fail_threshold (50 KiB) and was
    // refused whole. Here the bytes alone bound the batch, close to that limit: 48 KiB estimated
    // must be at most 50 KiB in Cassandra's count.
    CassandraConfig fewBatches =
        configWith(
            "fieldline.cassandra.coalesce { max-batches-in-flight = 1, max-queued-writes = 2000,"
                + " max-batch-statements = 4000, max-batch-bytes = 48 KiB }");
    FeedWriter feed = writer(4096);
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = store(fewBatches, limiter, feed);
    List<DeviceId> devices = new ArrayList<>();
    for (int d = 0; d < 100; d++) {
      devices.add(DeviceId.random());
    }
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      for (DeviceId device : devices) {
        writes.add(store.writeTelemetry(device, message(1, T0 + i)).toCompletableFuture());
      }
    }

    blocker.complete(null); // the queued writes leave as batches as full as the bounds allow

    writes.forEach(CassandraTestBase::await);
    assertThat(feed.settledPosition()).isEqualTo(1_000);
    assertThat(feedRows(feed.logId())).hasSize(1_000);
  }

  @Test
  void should_settle_refused_writes_as_failed_when_the_coalescer_queue_is_full() {
    CassandraConfig oneSlot =
        configWith(
            "fieldline.cassandra.coalesce { max-batches-in-flight = 1, max-queued-writes = 4 }");
    FeedWriter feed = writer(1024);
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = store(oneSlot, limiter, feed);

    // The first leaves as a batch held up in the limiter, four wait for the next, five are refused.
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      writes.add(store.writeTelemetry(DeviceId.random(), message(2, T0 + i)).toCompletableFuture());
    }
    for (CompletableFuture<Void> refused : writes.subList(5, 10)) {
      assertThat(failureKind(refused)).isEqualTo(StoreException.Kind.OVERLOADED);
    }
    assertThat(feed.settledPosition()).as("1 to 5 are in flight").isZero();

    blocker.complete(null);
    writes.subList(0, 5).forEach(CassandraTestBase::await);

    assertThat(feed.settledPosition()).isEqualTo(10);
    LocalFeed.Tail tail = feed.tail(0, 100);
    assertThat(positions(tail)).containsExactly(1L, 2L, 3L, 4L, 5L);
    assertThat(tail.through()).isEqualTo(10);
    assertThat(feedRows(feed.logId()))
        .extracting(row -> row[0])
        .containsExactlyInAnyOrder(1L, 2L, 3L, 4L, 5L);
  }

  @Test
  void should_take_no_position_when_a_timestamp_is_out_of_range() {
    FeedWriter feed = writer(1024);
    CassandraTelemetryStore store = store(config, new WriteLimiter(8, 100), feed);
    DeviceId device = DeviceId.random();

    CompletableFuture<Void> telemetry =
        store
            .writeTelemetry(
                device,
                List.of(
                    new TsKvEntry(T0, KvEntry.of("ok", 1L)),
                    new TsKvEntry(Long.MAX_VALUE, KvEntry.of("far", 2L))))
            .toCompletableFuture();
    CompletableFuture<Void> attributes =
        store
            .writeAttributes(
                device, AttributeScope.CLIENT_SCOPE, List.of(KvEntry.of("a", 1L)), Long.MAX_VALUE)
            .toCompletableFuture();

    assertThat(failureKind(telemetry)).isEqualTo(StoreException.Kind.FAILED);
    assertThat(failureKind(attributes)).isEqualTo(StoreException.Kind.FAILED);
    assertThat(feed.appended()).as("nothing left in flight to hold the log up").isZero();

    await(
        store.writeAttributes(
            device, AttributeScope.CLIENT_SCOPE, List.of(KvEntry.of("a", 1L)), T0));
    assertThat(feed.settledPosition()).isEqualTo(1);
    assertThat(feed.tail(0, 10).entries()).singleElement().isInstanceOf(FeedEntry.Attributes.class);
  }

  @Test
  void should_refuse_as_overloaded_when_the_feed_memory_is_full_of_writes_in_flight() {
    FeedWriter feed = writer(4);
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = store(config, limiter, feed);
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      writes.add(store.writeTelemetry(DeviceId.random(), message(1, T0 + i)).toCompletableFuture());
    }

    CompletableFuture<Void> fifth =
        store.writeTelemetry(DeviceId.random(), message(1, T0)).toCompletableFuture();

    assertThat(failureKind(fifth)).isEqualTo(StoreException.Kind.OVERLOADED);
    assertThat(feed.appended()).isEqualTo(4);
    blocker.complete(null);
    writes.forEach(CassandraTestBase::await);
    await(store.writeTelemetry(DeviceId.random(), message(1, T0)));
    assertThat(feed.settledPosition()).isEqualTo(5);
  }
}
