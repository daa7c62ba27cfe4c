package io.fieldline.dao.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.DevicePageQuery;
import io.fieldline.common.query.PageData;
import io.fieldline.common.query.SortOrder;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.schema.SchemaMigrator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The composition root against a keyspace it creates itself. */
class CassandraStorageIT {

  @Test
  void should_create_the_schema_once_and_serve_every_store_when_started_twice() throws Exception {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    Config root =
        ConfigFactory.parseString(
                "fieldline.cassandra.keyspace = it_cassandrastorageit\n"
                    + CassandraTestBase.TEST_DRIVER_CONFIG)
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();

    try (CassandraStorage storage =
        CassandraStorage.start(
            root, CassandraConfig.from(root), registry, List.of(cassandra.cqlAddress()))) {
      Device device =
          storage
              .deviceRegistry()
              .create("d1", "default", Optional.empty())
              .toCompletableFuture()
              .get(60, TimeUnit.SECONDS);
      storage
          .telemetryStore()
          .writeTelemetry(device.id(), List.of(new TsKvEntry(1L, KvEntry.of("t", 1L))))
          .toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
      assertThat(storage.reachable().toCompletableFuture().get(60, TimeUnit.SECONDS)).isTrue();
      assertThat(storage.drained().toCompletableFuture().get(10, TimeUnit.SECONDS)).isNull();
      assertThat(storage.pressure())
          .as("the coalescer's gauge, then the limiter's")
          .hasSize(2)
          .allSatisfy(gauge -> assertThat(gauge.level()).isZero());
      assertThat(registry.get(StoreMetrics.ROWS_WRITTEN).counter().count()).isEqualTo(1);
      assertThat(registry.get(StoreMetrics.DEVICE_DIRECTORY_SCANS).functionCounter().count())
          .as("one scan at start, none since")
          .isEqualTo(1);
    }

    CassandraStorage again =
        CassandraStorage.start(
            root, CassandraConfig.from(root), registry, List.of(cassandra.cqlAddress()));
    try (again) {
      assertThat(new SchemaMigrator(again.session(), "it_cassandrastorageit").appliedVersions())
          .containsExactlyInAnyOrderElementsOf(
              IntStream.rangeClosed(1, SchemaMigrator.latestVersion()).boxed().toList());
      assertThat(
              new SchemaMigrator(again.session(), "it_cassandrastorageit")
                  .migrate(again.config().replication(), 60))
          .isEmpty();
      assertThat(
              again
                  .deviceRegistry()
                  .list(10, Optional.empty())
                  .toCompletableFuture()
                  .get(60, TimeUnit.SECONDS))
          .extracting(Device::name)
          .containsExactly("d1");
      // The start filled the device directory: the listing needs no scan of its own.
      PageData<Device> listed =
          again
              .deviceRegistry()
              .page(
                  new DevicePageQuery(
                      10, 0, Optional.empty(), DevicePageQuery.SortProperty.NAME, SortOrder.ASC))
              .toCompletableFuture()
              .get(60, TimeUnit.SECONDS);
      assertThat(listed.data()).extracting(Device::name).containsExactly("d1");
      assertThat(
              again
                  .rpcStore()
                  .find(UUID.randomUUID())
                  .toCompletableFuture()
                  .get(60, TimeUnit.SECONDS))
          .isEmpty();
    }
    assertThat(again.reachable().toCompletableFuture().get(10, TimeUnit.SECONDS))
        .as("not reachable once closed")
        .isFalse();
  }
}
