package io.fieldline.dao.cassandra.telemetry.write;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.port.PressureGauge;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** Group commit against the real Cassandra: concurrent writes share requests, none is lost. */
class WriteCoalescerIT extends CassandraTestBase {

  private List<TsKvEntry> message(long ts) {
    return List.of(
        new TsKvEntry(ts, KvEntry.of("t", 21.5)),
        new TsKvEntry(ts, KvEntry.of("h", 40L)),
        new TsKvEntry(ts, KvEntry.of("on", true)));
  }

  private long storedRows(List<DeviceId> devices) {
    long rows = 0;
    for (DeviceId device : devices) {
      rows +=
          session
              .execute(
                  "SELECT count(*) FROM " + keyspace + ".ts_kv WHERE device_id = ? ALLOW FILTERING",
                  device.value())
              .one()
              .getLong(0);
    }
    return rows;
  }

  private CassandraConfig configWith(String settings) {
    return CassandraConfig.from(ConfigFactory.parseString(settings).withFallback(root).resolve());
  }

  // Takes the limiter's only slot until the returned future is completed.
  private static CompletableFuture<Void> occupy(WriteLimiter limiter) {
    CompletableFuture<Void> blocker = new CompletableFuture<>();
    limiter.submit(() -> blocker);
    return blocker;
  }

  private static List<CompletableFuture<Void>> writeMany(
      CassandraTelemetryStore store, List<DeviceId> devices, int count) {
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      DeviceId device = DeviceId.random();
      devices.add(device);
      writes.add(
          store
              .writeTelemetry(
                  device, List.of(new TsKvEntry(1_700_000_000_000L + i, KvEntry.of("t", 21.5))))
              .toCompletableFuture());
    }
    return writes;
  }

  @Test
  void should_share_requests_and_store_every_row_while_batch_slots_are_busy() {
    // One batch out at a time, and it is held up in the limiter until every write was submitted:
    // the first write leaves alone, the other 59 wait and leave together.
    CassandraConfig oneSlot = configWith("fieldline.cassandra.coalesce.max-batches-in-flight = 1");
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store =
        new CassandraTelemetryStore(session, oneSlot, limiter, registry);
    double requestsBefore = counter(StoreMetrics.REQUESTS);
    List<DeviceId> devices = new ArrayList<>();
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      DeviceId device = DeviceId.random();
      devices.add(device);
      writes.add(
          store.writeTelemetry(device, message(1_700_000_000_000L + i)).toCompletableFuture());
    }
    blocker.complete(null);
    CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0])).join();

    assertThat(storedRows(devices)).isEqualTo(180);
    // 59 writes of 7 statements (about 540 estimated bytes each) fit one 40 KiB batch.
    double requests = counter(StoreMetrics.REQUESTS) - requestsBefore;
    assertThat(requests).as("60 writes in two requests").isEqualTo(2.0);
  }

  @Test
  void should_send_each_write_alone_when_coalescing_is_off() {
    CassandraConfig off = configWith("fieldline.cassandra.coalesce-writes = false");
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CassandraTelemetryStore store = new CassandraTelemetryStore(session, off, limiter, registry);
    double requestsBefore = counter(StoreMetrics.REQUESTS);
    List<CompletionStage<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      writes.add(store.writeTelemetry(DeviceId.random(), message(1_700_000_000_000L + i)));
    }
    writes.forEach(CassandraTestBase::await);
    assertThat(counter(StoreMetrics.REQUESTS) - requestsBefore).isEqualTo(20);
    assertThat(store.pressure()).isEmpty();
  }

  @Test
  void should_fail_every_write_of_a_batch_when_the_limiter_refuses_it() {
    // The limiter's only slot is taken and it queues nothing: each batch is refused (OVERLOADED)
    // and every write fails instead of hanging; nothing is stored. (Each batch here carries one
    // write, since the refusal is immediate.)
    WriteLimiter limiter = new WriteLimiter(1, 0);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = new CassandraTelemetryStore(session, config, limiter, registry);
    List<DeviceId> devices = new ArrayList<>();
    List<CompletableFuture<Void>> writes = writeMany(store, devices, 10);
    blocker.complete(null);
    CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0]))
        .exceptionally(error -> null)
        .join();

    assertThat(writes)
        .allSatisfy(write -> assertThat(kindOf(write)).isEqualTo(StoreException.Kind.OVERLOADED));
    assertThat(storedRows(devices)).isZero();
  }

  @Test
  void should_refuse_writes_beyond_the_queue_bound_and_keep_the_rest() {
    // One batch slot, held up in the limiter: the first write takes the slot, 8 wait, 5 are
    // refused.
    CassandraConfig small =
        configWith(
            """
            fieldline.cassandra.coalesce.max-batches-in-flight = 1
            fieldline.cassandra.coalesce.max-queued-writes = 8
            """);
    WriteLimiter limiter = new WriteLimiter(1, 10);
    CompletableFuture<Void> blocker = occupy(limiter);
    CassandraTelemetryStore store = new CassandraTelemetryStore(session, small, limiter, registry);
    PressureGauge pending = store.pressure().get(0);
    List<DeviceId> devices = new ArrayList<>();
    List<CompletableFuture<Void>> writes = writeMany(store, devices, 14);

    assertThat(writes.subList(9, 14))
        .allSatisfy(write -> assertThat(kindOf(write)).isEqualTo(StoreException.Kind.OVERLOADED));
    assertThat(writes.subList(0, 9)).noneMatch(CompletableFuture::isDone);
    assertThat(pending.level()).isEqualTo(9);
    assertThat(pending.isOverloaded()).as("overloaded at half the queue bound").isTrue();

    blocker.complete(null);
    CompletableFuture.allOf(writes.subList(0, 9).toArray(new CompletableFuture<?>[0])).join();
    assertThat(storedRows(devices)).isEqualTo(9);
    assertThat(pending.level()).isZero();
    assertThat(pending.isOverloaded()).isFalse();
  }

  private static StoreException.Kind kindOf(CompletableFuture<Void> write) {
    try {
      write.join();
      return null;
    } catch (CompletionException e) {
      return e.getCause() instanceof StoreException store ? store.kind() : null;
    }
  }
}
