package io.fieldline.dao.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.KvEntry;
import io.fieldline.common.TsKvEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
      rows += session.execute("SELECT count(*) FROM " + keyspace + ".ts_kv WHERE device_id = ? ALLOW FILTERING",
          device.value()).one().getLong(0);
    }
    return rows;
  }

  @Test
  void should_share_requests_and_store_every_row_when_writes_back_up() {
    // One request in flight at a time: everything submitted meanwhile waits and leaves together.
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CassandraTelemetryStore store = new CassandraTelemetryStore(session, config, limiter, registry);
    double requestsBefore = counter(StoreMetrics.REQUESTS);
    List<DeviceId> devices = new ArrayList<>();
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      DeviceId device = DeviceId.random();
      devices.add(device);
      writes.add(store.writeTelemetry(device, message(1_700_000_000_000L + i)).toCompletableFuture());
    }
    CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0])).join();

    assertThat(storedRows(devices)).isEqualTo(180);
    double requests = counter(StoreMetrics.REQUESTS) - requestsBefore;
    assertThat(requests).as("60 writes in fewer requests").isLessThan(30).isGreaterThanOrEqualTo(1);
  }

  @Test
  void should_send_each_write_alone_when_coalescing_is_off() {
    CassandraConfig off = CassandraConfig.from(
        com.typesafe.config.ConfigFactory.parseString("fieldline.cassandra.coalesce-writes = false")
            .withFallback(root));
    WriteLimiter limiter = new WriteLimiter(1, 1000);
    CassandraTelemetryStore store = new CassandraTelemetryStore(session, off, limiter, registry);
    double requestsBefore = counter(StoreMetrics.REQUESTS);
    List<CompletionStage<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      writes.add(store.writeTelemetry(DeviceId.random(), message(1_700_000_000_000L + i)));
    }
    writes.forEach(CassandraTestBase::await);
    assertThat(counter(StoreMetrics.REQUESTS) - requestsBefore).isEqualTo(20);
  }

  @Test
  void should_fail_every_write_of_a_batch_when_the_limiter_refuses_it() {
    // No queue at all: a second concurrent write is refused (OVERLOADED) and never stored.
    WriteLimiter limiter = new WriteLimiter(1, 0);
    CassandraTelemetryStore store = new CassandraTelemetryStore(session, config, limiter, registry);
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      writes.add(store.writeTelemetry(DeviceId.random(), message(1_700_000_000_000L + i))
          .toCompletableFuture());
    }
    CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0]))
        .exceptionally(error -> null).join();
    long failed = writes.stream().filter(CompletableFuture::isCompletedExceptionally).count();
    long succeeded = writes.size() - failed;
    assertThat(succeeded).isGreaterThanOrEqualTo(1);
    assertThat(failed).as("refused writes fail instead of hanging").isGreaterThanOrEqualTo(1);
  }
}
