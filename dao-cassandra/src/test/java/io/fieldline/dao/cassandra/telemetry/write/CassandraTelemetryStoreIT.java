package io.fieldline.dao.cassandra.telemetry.write;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.cassandra.embedded.SharedCassandra;
import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.TsPartitioning;
import io.fieldline.dao.cassandra.cql.ReadLimiter;
import io.fieldline.dao.cassandra.cql.StoreMetrics;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.schema.KeyIndexBackfill;
import io.fieldline.dao.cassandra.telemetry.read.CassandraTelemetryQueries;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CassandraTelemetryStoreIT extends CassandraTestBase {

  private static final long LAST_MS_OF_JANUARY =
      Instant.parse("2024-01-31T23:59:59.999Z").toEpochMilli();
  private static final long FIRST_MS_OF_FEBRUARY = LAST_MS_OF_JANUARY + 1;

  private WriteLimiter limiter;
  private CassandraTelemetryStore store;
  private CassandraTelemetryQueries queries;
  // A new device per test: the store remembers which partitions it recorded, and TRUNCATE
  // behind its back would otherwise hide rows of a reused device from history reads.
  private DeviceId device;

  @BeforeAll
  void createStore() {
    limiter = WriteLimiter.from(config);
    store = new CassandraTelemetryStore(session, config, limiter, registry);
    queries =
        new CassandraTelemetryQueries(
            session, config, ReadLimiter.from(config.reads(), () -> false));
  }

  @BeforeEach
  void newDevice() {
    device = DeviceId.random();
  }

  private static TsKvEntry at(long ts, KvEntry kv) {
    return new TsKvEntry(ts, kv);
  }

  private Map<String, List<TsKvEntry>> history(Set<String> keys, long from, long to) {
    return await(queries.history(device, HistoryQuery.raw(keys, from, to)));
  }

  @Test
  void should_read_back_all_five_types_when_written_in_one_message() {
    long ts = 1_700_000_000_000L;
    List<TsKvEntry> entries =
        List.of(
            at(ts, KvEntry.of("on", true)),
            at(ts, KvEntry.of("count", 42L)),
            at(ts, KvEntry.of("temp", 21.5)),
            at(ts, KvEntry.of("state", "idle")),
            at(ts, KvEntry.json("cfg", "{\"a\":[1,2]}")));

    await(store.writeTelemetry(device, entries));

    assertThat(await(store.readLatest(device))).containsExactlyInAnyOrderElementsOf(entries);
    Map<String, List<TsKvEntry>> history =
        history(Set.of("on", "count", "temp", "state", "cfg"), ts, ts + 1);
    assertThat(history.values().stream().flatMap(List::stream))
        .containsExactlyInAnyOrderElementsOf(entries);
    assertThat(await(queries.keys(device))).containsExactly("cfg", "count", "on", "state", "temp");
  }

  @Test
  void should_write_one_batch_touching_both_partitions_when_a_message_spans_two_buckets() {
    double requestsBefore = counter(StoreMetrics.REQUESTS);
    double mutationsBefore = counter(StoreMetrics.MUTATIONS);

    await(
        store.writeTelemetry(
            device,
            List.of(
                at(LAST_MS_OF_JANUARY, KvEntry.of("t", 1L)),
                at(FIRST_MS_OF_FEBRUARY, KvEntry.of("t", 2L)))));

    assertThat(counter(StoreMetrics.REQUESTS) - requestsBefore).isEqualTo(1);
    // two ts_kv partitions + ts_kv_partitions + ts_kv_keys (latest values are read from ts_kv)
    assertThat(counter(StoreMetrics.MUTATIONS) - mutationsBefore).isEqualTo(4);
    List<Long> parts =
        session
            .execute(
                "SELECT part FROM " + keyspace + ".ts_kv_partitions WHERE device_id = ?",
                device.value())
            .all()
            .stream()
            .map(row -> row.getLong(0))
            .toList();
    assertThat(parts)
        .containsExactly(
            TsPartitioning.MONTHS.partitionOf(FIRST_MS_OF_FEBRUARY),
            TsPartitioning.MONTHS.partitionOf(LAST_MS_OF_JANUARY));
    assertThat(history(Set.of("t"), 0, Long.MAX_VALUE).get("t"))
        .containsExactly(
            at(FIRST_MS_OF_FEBRUARY, KvEntry.of("t", 2L)),
            at(LAST_MS_OF_JANUARY, KvEntry.of("t", 1L)));
  }

  @Test
  void should_apply_start_inclusive_end_exclusive_bounds_when_reading_across_a_month_boundary() {
    await(store.writeTelemetry(device, List.of(at(LAST_MS_OF_JANUARY, KvEntry.of("t", 1L)))));
    await(store.writeTelemetry(device, List.of(at(FIRST_MS_OF_FEBRUARY, KvEntry.of("t", 2L)))));

    assertThat(history(Set.of("t"), LAST_MS_OF_JANUARY, FIRST_MS_OF_FEBRUARY).get("t"))
        .containsExactly(at(LAST_MS_OF_JANUARY, KvEntry.of("t", 1L)));
    assertThat(history(Set.of("t"), FIRST_MS_OF_FEBRUARY, FIRST_MS_OF_FEBRUARY + 1).get("t"))
        .containsExactly(at(FIRST_MS_OF_FEBRUARY, KvEntry.of("t", 2L)));
    assertThat(history(Set.of("t"), LAST_MS_OF_JANUARY, FIRST_MS_OF_FEBRUARY + 1).get("t"))
        .hasSize(2);
    assertThat(history(Set.of("t"), LAST_MS_OF_JANUARY + 1, FIRST_MS_OF_FEBRUARY)).isEmpty();
  }

  @Test
  void should_keep_the_newer_latest_value_when_an_older_one_arrives_later() {
    await(store.writeTelemetry(device, List.of(at(2_000, KvEntry.of("t", 20L)))));
    await(store.writeTelemetry(device, List.of(at(1_000, KvEntry.of("t", 10.5)))));

    assertThat(await(store.readLatest(device))).containsExactly(at(2_000, KvEntry.of("t", 20L)));
    assertThat(history(Set.of("t"), 0, 3_000).get("t")).hasSize(2);
  }

  @Test
  void should_read_each_keys_latest_value_from_its_own_newest_bucket() {
    await(store.writeTelemetry(device, List.of(at(LAST_MS_OF_JANUARY, KvEntry.of("a", 1L)))));
    await(
        store.writeTelemetry(
            device,
            List.of(
                at(FIRST_MS_OF_FEBRUARY, KvEntry.of("b", 2L)),
                at(FIRST_MS_OF_FEBRUARY + 5, KvEntry.of("b", 3L)))));
    // Late, older value of b: neither its bucket nor its row is newer.
    await(store.writeTelemetry(device, List.of(at(LAST_MS_OF_JANUARY - 9, KvEntry.of("b", 0L)))));

    assertThat(await(store.readLatest(device)))
        .containsExactly(
            at(LAST_MS_OF_JANUARY, KvEntry.of("a", 1L)),
            at(FIRST_MS_OF_FEBRUARY + 5, KvEntry.of("b", 3L)));
    assertThat(await(queries.latest(device, Optional.of(Set.of("b", "nope")))))
        .containsExactly(at(FIRST_MS_OF_FEBRUARY + 5, KvEntry.of("b", 3L)));
    assertThat(await(queries.keys(device))).containsExactly("a", "b");
  }

  @Test
  void should_keep_latest_values_of_version_1_data_readable_after_the_key_index_backfill() {
    // What a schema-version-1 build left: rows and ts_kv_latest, no ts_kv_keys.
    long part = TsPartitioning.MONTHS.partitionOf(LAST_MS_OF_JANUARY);
    session.execute(
        "INSERT INTO "
            + keyspace
            + ".ts_kv (device_id, part, key, ts, long_v) VALUES (?, ?, 'old', ?, 7)",
        device.value(),
        part,
        LAST_MS_OF_JANUARY);
    session.execute(
        "INSERT INTO "
            + keyspace
            + ".ts_kv_latest (device_id, key, ts, long_v) VALUES (?, 'old', ?, 7)",
        device.value(),
        LAST_MS_OF_JANUARY);
    assertThat(await(queries.keys(device))).as("not indexed yet").isEmpty();

    long written = KeyIndexBackfill.run(session, config);

    assertThat(written).isGreaterThanOrEqualTo(1);
    assertThat(await(queries.keys(device))).containsExactly("old");
    assertThat(await(store.readLatest(device)))
        .containsExactly(at(LAST_MS_OF_JANUARY, KvEntry.of("old", 7L)));
  }

  @Test
  void should_find_the_latest_value_in_an_older_bucket_when_the_newest_indexed_one_has_no_row() {
    await(store.writeTelemetry(device, List.of(at(LAST_MS_OF_JANUARY, KvEntry.of("t", 1L)))));
    // What a batch that timed out half-applied can leave: February's index row, no February row.
    session.execute(
        "INSERT INTO " + keyspace + ".ts_kv_keys (device_id, key, part) VALUES (?, 't', ?)",
        device.value(),
        TsPartitioning.MONTHS.partitionOf(FIRST_MS_OF_FEBRUARY));

    assertThat(await(store.readLatest(device)))
        .containsExactly(at(LAST_MS_OF_JANUARY, KvEntry.of("t", 1L)));
  }

  @Test
  void should_return_the_new_type_when_a_key_changes_type() {
    await(store.writeTelemetry(device, List.of(at(1_000, KvEntry.of("t", 20L)))));
    await(store.writeTelemetry(device, List.of(at(2_000, KvEntry.of("t", "hot")))));

    assertThat(await(store.readLatest(device))).containsExactly(at(2_000, KvEntry.of("t", "hot")));
  }

  @Test
  void should_not_duplicate_rows_when_the_same_message_is_retransmitted() {
    List<TsKvEntry> message =
        List.of(at(5_000, KvEntry.of("a", 1L)), at(5_000, KvEntry.of("b", 2.0)));

    await(store.writeTelemetry(device, message));
    await(store.writeTelemetry(device, message));

    long rows =
        session
            .execute(
                "SELECT count(*) FROM " + keyspace + ".ts_kv WHERE device_id = ? AND part = ?",
                device.value(),
                TsPartitioning.MONTHS.partitionOf(5_000))
            .one()
            .getLong(0);
    assertThat(rows).isEqualTo(2);
  }

  @Test
  void should_fail_the_stage_instead_of_throwing_when_a_timestamp_is_out_of_range() {
    CassandraTelemetryStore ttlStore =
        new CassandraTelemetryStore(session, config.withTsTtlSeconds(60), limiter, registry);
    for (CassandraTelemetryStore s : List.of(store, ttlStore)) {
      Throwable failure =
          s.writeTelemetry(device, List.of(at(Long.MAX_VALUE, KvEntry.of("t", 1L))))
              .handle((ok, error) -> error)
              .toCompletableFuture()
              .join();

      assertThat(failure)
          .isInstanceOfSatisfying(
              StoreException.class,
              e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.FAILED));
    }
    assertThat(await(store.readLatest(device))).isEmpty();
  }

  @Test
  void should_complete_without_io_when_the_message_is_empty() {
    double before = counter(StoreMetrics.REQUESTS);

    await(store.writeTelemetry(device, List.of()));

    assertThat(counter(StoreMetrics.REQUESTS)).isEqualTo(before);
  }

  @Test
  void should_send_a_large_message_as_one_coalesced_batch_when_it_fits() {
    List<TsKvEntry> many =
        IntStream.range(0, 120).mapToObj(i -> at(7_000, KvEntry.of("k" + i, (long) i))).toList();
    double before = counter(StoreMetrics.REQUESTS);

    await(store.writeTelemetry(device, many));

    // 120 ts rows + 120 key index rows + 1 partition row = 241 statements, about 18 KB estimated:
    // within one coalesced batch (512 statements, 40 KiB).
    assertThat(counter(StoreMetrics.REQUESTS) - before).isEqualTo(1);
    assertThat(await(store.readLatest(device))).hasSize(120);
  }

  @Test
  void should_split_into_several_batches_when_a_message_exceeds_a_coalesced_batch() {
    List<TsKvEntry> many =
        IntStream.range(0, 300).mapToObj(i -> at(7_000, KvEntry.of("k" + i, (long) i))).toList();
    double before = counter(StoreMetrics.REQUESTS);

    await(store.writeTelemetry(device, many));

    // 300 rows + 300 key index rows + 1 partition row = 601 statements (44.2 KB estimated) exceed
    // a coalesced batch, so the message goes alone in batches of max-batch-statements (100) and
    // max-batch-bytes (5 KiB, about 68 statements).
    assertThat(counter(StoreMetrics.REQUESTS) - before).isEqualTo(9);
    assertThat(await(store.readLatest(device))).hasSize(300);
  }

  @Test
  void should_store_large_values_when_a_message_exceeds_cassandras_batch_size_limit() {
    String big = "x".repeat(40_000); // 3 x 2 statements x 80 KB estimated: over 50 KiB fail limit
    List<TsKvEntry> message =
        List.of(
            at(8_000, KvEntry.of("a", big)),
            at(8_000, KvEntry.json("b", "[\"" + big + "\"]")),
            at(8_000, KvEntry.of("c", big)));

    await(store.writeTelemetry(device, message));

    assertThat(await(store.readLatest(device))).containsExactlyInAnyOrderElementsOf(message);
  }

  @Test
  void should_read_attributes_back_with_the_newest_value_winning_when_written_twice() {
    List<KvEntry> first = List.of(KvEntry.of("fw", "1.0"), KvEntry.of("interval", 10L));
    await(store.writeAttributes(device, AttributeScope.CLIENT_SCOPE, first, 2_000));
    await(
        store.writeAttributes(
            device, AttributeScope.CLIENT_SCOPE, List.of(KvEntry.of("fw", 0.9)), 1_000));
    await(
        store.writeAttributes(
            device, AttributeScope.SHARED_SCOPE, List.of(KvEntry.of("x", true)), 3_000));

    assertThat(await(queries.attributes(device, AttributeScope.CLIENT_SCOPE, Optional.empty())))
        .containsExactly(
            new AttributeKvEntry(2_000, KvEntry.of("fw", "1.0")),
            new AttributeKvEntry(2_000, KvEntry.of("interval", 10L)));
    assertThat(
            await(
                queries.attributes(
                    device, AttributeScope.CLIENT_SCOPE, Optional.of(Set.of("interval")))))
        .containsExactly(new AttributeKvEntry(2_000, KvEntry.of("interval", 10L)));
    assertThat(await(queries.attributes(device, AttributeScope.SHARED_SCOPE, Optional.empty())))
        .containsExactly(new AttributeKvEntry(3_000, KvEntry.of("x", true)));
  }

  @Test
  void should_expire_rows_but_not_latest_when_written_with_a_ttl() {
    CassandraConfig withTtl = config.withTsTtlSeconds(2);
    CassandraTelemetryStore ttlStore =
        new CassandraTelemetryStore(session, withTtl, limiter, registry);
    long now = System.currentTimeMillis();

    await(ttlStore.writeTelemetry(device, List.of(at(now, KvEntry.of("t", 1L)))));
    assertThat(history(Set.of("t"), now, now + 1)).containsKey("t");

    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> history(Set.of("t"), now, now + 1).isEmpty());
    // With a TTL, latest values live in ts_kv_latest and outlive their rows.
    assertThat(await(ttlStore.readLatest(device))).containsExactly(at(now, KvEntry.of("t", 1L)));
    assertThat(
            await(
                new CassandraTelemetryQueries(
                        session, withTtl, ReadLimiter.from(withTtl.reads(), () -> false))
                    .keys(device)))
        .containsExactly("t");
  }

  @Test
  void should_issue_one_partition_update_and_one_round_trip_per_message_when_bucket_is_known() {
    for (int keys : new int[] {1, 3, 5, 10}) {
      DeviceId d = DeviceId.random();
      await(store.writeTelemetry(d, message(keys, 1_000)));
      double requests = counter(StoreMetrics.REQUESTS);
      double mutations = counter(StoreMetrics.MUTATIONS);

      for (int i = 1; i <= 10; i++) {
        await(store.writeTelemetry(d, message(keys, 1_000 + i)));
      }

      double perMessageMutations = (counter(StoreMetrics.MUTATIONS) - mutations) / 10;
      double perMessageRequests = (counter(StoreMetrics.REQUESTS) - requests) / 10;
      System.out.printf(
          "K=%d keys: %.1f partition updates, %.1f round trips per message%n",
          keys, perMessageMutations, perMessageRequests);
      assertThat(perMessageMutations).isEqualTo(1.0);
      assertThat(perMessageRequests).isEqualTo(1.0);
    }
  }

  @Test
  void should_fail_with_a_store_exception_then_recover_by_itself_when_cassandra_restarts() {
    await(store.writeTelemetry(device, message(1, 1_000)));
    double failuresBefore = counter(StoreMetrics.WRITE_FAILURES);

    cassandra.kill();
    Throwable failure =
        store
            .writeTelemetry(device, message(1, 2_000))
            .handle((ok, error) -> error)
            .toCompletableFuture()
            .join();

    assertThat(failure)
        .isInstanceOfSatisfying(
            StoreException.class,
            e ->
                assertThat(e.kind())
                    .isIn(StoreException.Kind.UNAVAILABLE, StoreException.Kind.TIMEOUT));
    assertThat(counter(StoreMetrics.WRITE_FAILURES)).isEqualTo(failuresBefore + 1);

    SharedCassandra.get(); // restarts the node on the same port
    // The driver reconnects on its own (exponential policy, at most 10 s between attempts).
    Awaitility.await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .until(
            () -> {
              store.writeTelemetry(device, message(1, 3_000)).toCompletableFuture().join();
              return true;
            });
    assertThat(await(store.readLatest(device))).extracting(TsKvEntry::ts).containsOnly(3_000L);
  }

  private static List<TsKvEntry> message(int keys, long ts) {
    return IntStream.range(0, keys).mapToObj(i -> at(ts, KvEntry.of("key" + i, 20.0 + i))).toList();
  }
}
