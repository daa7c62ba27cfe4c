package io.fieldline.dao.cassandra.schema;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.fieldline.cassandra.embedded.EmbeddedCassandra;
import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.credentials.CredentialsType;
import io.fieldline.common.device.Device;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraStorage;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.TsPartitioning;
import io.fieldline.dao.cassandra.cql.CassandraSessionFactory;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An upgrade as an operator meets it: a keyspace left by an older Fieldline (schema at an older
 * version, rows written the way that version wrote them), then the new version's start — {@link
 * CassandraStorage#start}, what the server runs — migrates it, and the old data is served by the
 * new stores: the device found by its token and by name, its latest values, history and attributes;
 * and the upgraded keyspace takes new writes. Once per released version below the newest.
 */
class SchemaUpgradeIT {

  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final TsPartitioning PARTITIONING = TsPartitioning.MONTHS;

  static IntStream olderVersions() {
    return IntStream.range(1, SchemaMigrator.latestVersion());
  }

  @ParameterizedTest(name = "from schema version {0}")
  @MethodSource("olderVersions")
  void should_serve_the_data_an_older_version_wrote_after_the_new_version_migrated_it(int from)
      throws Exception {
    EmbeddedCassandra cassandra = SharedCassandra.get();
    String keyspace = "it_upgrade_from_v" + from;
    Config root =
        ConfigFactory.parseString(
                "fieldline.cassandra.keyspace = "
                    + keyspace
                    + "\nfieldline.cassandra.ts-partitioning = "
                    + PARTITIONING
                    + "\n"
                    + CassandraTestBase.TEST_DRIVER_CONFIG
                    + "datastax-java-driver.basic.load-balancing-policy.local-datacenter = "
                    + cassandra.localDatacenter())
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    CassandraConfig config = CassandraConfig.from(root);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();

    UUID deviceId = UUID.randomUUID();
    long t1 = 1_700_000_000_000L;
    long t2 = t1 + 40L * 24 * 3600 * 1000; // the next monthly partition
    try (CqlSession session =
        CassandraSessionFactory.open(root, config, List.of(cassandra.cqlAddress()), registry)) {
      session.execute("DROP KEYSPACE IF EXISTS " + keyspace);
      SchemaMigrator old = new SchemaMigrator(session, keyspace, Migrations.ALL.subList(0, from));
      assertThat(old.migrate(config.replication(), 60))
          .containsExactlyElementsOf(IntStream.rangeClosed(1, from).boxed().toList());
      writeAsOlderVersionDid(from, session, keyspace, deviceId, t1, t2);
    }

    try (CassandraStorage storage =
        CassandraStorage.start(root, config, registry, List.of(cassandra.cqlAddress()))) {
      try (CqlSession session =
          CassandraSessionFactory.open(root, config, List.of(cassandra.cqlAddress()), registry)) {
        assertThat(new SchemaMigrator(session, keyspace).appliedVersions())
            .as("every version applied once")
            .containsExactlyElementsOf(
                IntStream.rangeClosed(1, SchemaMigrator.latestVersion()).boxed().toList());
      }
      Device device = await(storage.deviceRegistry().findByToken("old-token")).orElseThrow();
      assertThat(device.id().value()).isEqualTo(deviceId);
      assertThat(device.name()).isEqualTo("old-device");
      assertThat(await(storage.credentialsStore().findCredentials(device.id())))
          .hasValueSatisfying(
              credentials ->
                  assertThat(credentials.credentials().type())
                      .as("a row from before version 3 has no credentials type: an access token")
                      .isEqualTo(CredentialsType.ACCESS_TOKEN));
      assertThat(await(storage.deviceRegistry().findByName("old-device"))).isPresent();
      assertThat(await(storage.deviceRegistry().list(10, Optional.empty())))
          .extracting(Device::name)
          .containsExactly("old-device");

      assertThat(await(storage.queries().keys(device.id())))
          .containsExactlyInAnyOrder("temperature", "status");
      assertThat(await(storage.queries().latest(device.id(), Optional.empty())))
          .as("latest values: from ts_kv through the key index, filled by version 2's data step")
          .extracting(TsKvEntry::ts, entry -> entry.kv().value())
          .containsExactlyInAnyOrder(
              org.assertj.core.groups.Tuple.tuple(t2, 22.5),
              org.assertj.core.groups.Tuple.tuple(t1, "ok"));
      Map<String, List<TsKvEntry>> history =
          await(
              storage
                  .queries()
                  .history(device.id(), HistoryQuery.raw(Set.of("temperature"), t1, t2 + 1)));
      assertThat(history.get("temperature"))
          .extracting(TsKvEntry::ts)
          .containsExactlyInAnyOrder(t1, t2);
      assertThat(
              await(
                  storage
                      .queries()
                      .attributes(device.id(), AttributeScope.CLIENT_SCOPE, Optional.empty())))
          .extracting(AttributeKvEntry::key)
          .containsExactly("firmware");

      long t3 = t2 + 1000;
      await(
          storage
              .telemetryStore()
              .writeTelemetry(
                  device.id(), List.of(new TsKvEntry(t3, KvEntry.of("temperature", 23L)))));
      assertThat(await(storage.queries().latest(device.id(), Optional.of(Set.of("temperature")))))
          .as("the upgraded keyspace takes new writes")
          .extracting(TsKvEntry::ts)
          .containsExactly(t3);
      Device created =
          await(storage.deviceRegistry().create("new-device", "default", Optional.empty()));
      assertThat(await(storage.deviceRegistry().list(10, Optional.empty())))
          .extracting(Device::name)
          .containsExactly("new-device", "old-device");
      assertThat(created.name()).isEqualTo("new-device");
    } finally {
      try (CqlSession session =
          CassandraSessionFactory.open(root, config, List.of(cassandra.cqlAddress()), registry)) {
        session.execute(
            SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS " + keyspace).setTimeout(TIMEOUT));
      }
    }
  }

  /**
   * Rows as Fieldline wrote them at schema version {@code from}: a device with its token and name
   * (no credential columns: those came with version 3), telemetry in two monthly partitions with
   * the latest values kept in {@code ts_kv_latest} and, from version 2 on, the key index {@code
   * ts_kv_keys} written beside every row, and one client attribute.
   */
  private static void writeAsOlderVersionDid(
      int from, CqlSession session, String ks, UUID device, long t1, long t2) {
    session.execute(
        "INSERT INTO "
            + ks
            + ".devices (id, name, type, access_token, created_time)"
            + " VALUES (?, 'old-device', 'sensor', 'old-token', ?)",
        device,
        t1);
    session.execute(
        "INSERT INTO " + ks + ".device_by_token (access_token, device_id) VALUES ('old-token', ?)",
        device);
    session.execute(
        "INSERT INTO "
            + ks
            + ".device_by_name (bucket, name, device_id) VALUES (0, 'old-device', ?)",
        device);
    for (long ts : List.of(t1, t2)) {
      long part = PARTITIONING.partitionOf(ts);
      session.execute(
          "INSERT INTO " + ks + ".ts_kv_partitions (device_id, part) VALUES (?, ?)", device, part);
      session.execute(
          "INSERT INTO "
              + ks
              + ".ts_kv (device_id, part, key, ts, dbl_v) VALUES (?, ?, 'temperature', ?, ?)",
          device,
          part,
          ts,
          ts == t1 ? 21.5 : 22.5);
    }
    session.execute(
        "INSERT INTO "
            + ks
            + ".ts_kv (device_id, part, key, ts, str_v) VALUES (?, ?, 'status', ?, 'ok')",
        device,
        PARTITIONING.partitionOf(t1),
        t1);
    session.execute(
        "INSERT INTO "
            + ks
            + ".ts_kv_latest (device_id, key, ts, dbl_v) VALUES (?, 'temperature', ?, 22.5)",
        device,
        t2);
    session.execute(
        "INSERT INTO "
            + ks
            + ".ts_kv_latest (device_id, key, ts, str_v) VALUES (?, 'status', ?, 'ok')",
        device,
        t1);
    if (from >= 2) {
      for (long ts : List.of(t1, t2)) {
        session.execute(
            "INSERT INTO " + ks + ".ts_kv_keys (device_id, key, part) VALUES (?, 'temperature', ?)",
            device,
            PARTITIONING.partitionOf(ts));
      }
      session.execute(
          "INSERT INTO " + ks + ".ts_kv_keys (device_id, key, part) VALUES (?, 'status', ?)",
          device,
          PARTITIONING.partitionOf(t1));
    }
    session.execute(
        "INSERT INTO "
            + ks
            + ".attributes_kv (device_id, scope, key, last_update_ts, str_v)"
            + " VALUES (?, 'CLIENT_SCOPE', 'firmware', ?, '1.0.3')",
        device,
        t1);
  }

  private static <T> T await(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new AssertionError("stage did not complete normally", e);
    }
  }
}
