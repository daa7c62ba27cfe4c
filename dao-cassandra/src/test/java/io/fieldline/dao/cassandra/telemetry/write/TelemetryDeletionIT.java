package io.fieldline.dao.cassandra.telemetry.write;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TimestampRange;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.dao.cassandra.CassandraConfig;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.ReadLimiter;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.telemetry.read.CassandraTelemetryQueries;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Attribute and time-series deletes against real Cassandra, in both latest-value modes: derived
 * ({@code ts-ttl = 0}, latest values read from the rows) and table ({@code ts-ttl} set, {@code
 * ts_kv_latest}). Buckets are months (the default), so the values below span four buckets.
 */
class TelemetryDeletionIT extends CassandraTestBase {

  private static final long JAN_30 = Instant.parse("2024-01-30T12:00:00Z").toEpochMilli();
  private static final long JAN_31 = Instant.parse("2024-01-31T12:00:00Z").toEpochMilli();
  private static final long FEB_1 = Instant.parse("2024-02-01T00:00:00Z").toEpochMilli();
  private static final long FEB_2 = Instant.parse("2024-02-02T00:00:00Z").toEpochMilli();
  private static final long MAR_1 = Instant.parse("2024-03-01T00:00:00Z").toEpochMilli();
  private static final long APR_1 = Instant.parse("2024-04-01T00:00:00Z").toEpochMilli();

  private WriteLimiter limiter;
  private CassandraTelemetryStore derived;
  private CassandraTelemetryQueries derivedQueries;
  private CassandraTelemetryStore table;
  private CassandraTelemetryQueries tableQueries;
  private DeviceId device;

  @BeforeAll
  void createStores() {
    limiter = WriteLimiter.from(config);
    derived = new CassandraTelemetryStore(session, config, limiter, registry);
    derivedQueries =
        new CassandraTelemetryQueries(
            session, config, ReadLimiter.from(config.reads(), () -> false));
    // Rows live an hour: long enough for every test, and latest values come from ts_kv_latest.
    CassandraConfig withTtl = config.withTsTtlSeconds(3600);
    table = new CassandraTelemetryStore(session, withTtl, limiter, registry);
    tableQueries =
        new CassandraTelemetryQueries(
            session, withTtl, ReadLimiter.from(withTtl.reads(), () -> false));
  }

  @BeforeEach
  void newDevice() {
    device = DeviceId.random();
  }

  private static TsKvEntry at(long ts, String key, long value) {
    return new TsKvEntry(ts, KvEntry.of(key, value));
  }

  private void write(CassandraTelemetryStore store, TsKvEntry... entries) {
    await(store.writeTelemetry(device, List.of(entries)));
  }

  private List<TsKvEntry> history(CassandraTelemetryQueries queries, String key) {
    Map<String, List<TsKvEntry>> found =
        await(
            queries.history(
                device, HistoryQuery.raw(Set.of(key), TimestampRange.MIN, TimestampRange.MAX + 1)));
    return found.getOrDefault(key, List.of());
  }

  private List<TsKvEntry> latest(CassandraTelemetryQueries queries, String key) {
    return await(queries.latest(device, Optional.of(Set.of(key))));
  }

  private void deleteAll(CassandraTelemetryStore store, String key, boolean rewrite) {
    await(
        store.deleteTelemetry(
            device, Set.of(key), TimestampRange.MIN, TimestampRange.MAX, rewrite));
  }

  @Test
  void should_delete_only_the_given_keys_of_the_scope_when_deleting_attributes() {
    List<KvEntry> values = List.of(KvEntry.of("fw", "1.0"), KvEntry.of("interval", 10L));
    await(derived.writeAttributes(device, AttributeScope.SHARED_SCOPE, values, 2_000));
    await(derived.writeAttributes(device, AttributeScope.SERVER_SCOPE, values, 2_000));

    await(derived.deleteAttributes(device, AttributeScope.SHARED_SCOPE, Set.of("fw", "nope")));

    assertThat(
            await(derivedQueries.attributes(device, AttributeScope.SHARED_SCOPE, Optional.empty())))
        .containsExactly(new AttributeKvEntry(2_000, KvEntry.of("interval", 10L)));
    assertThat(
            await(derivedQueries.attributes(device, AttributeScope.SERVER_SCOPE, Optional.empty())))
        .hasSize(2);
  }

  @Test
  void should_delete_the_values_in_range_in_every_bucket_and_keep_the_latest_when_outside() {
    for (CassandraTelemetryStore store : List.of(derived, table)) {
      newDevice();
      CassandraTelemetryQueries queries = store == derived ? derivedQueries : tableQueries;
      write(
          store,
          at(JAN_30, "t", 1),
          at(JAN_31, "t", 2),
          at(FEB_1, "t", 3),
          at(FEB_2, "t", 4),
          at(MAR_1, "t", 5),
          at(FEB_1, "other", 9));

      await(store.deleteTelemetry(device, Set.of("t"), JAN_31, FEB_2, false));

      assertThat(history(queries, "t"))
          .containsExactly(at(MAR_1, "t", 5), at(FEB_2, "t", 4), at(JAN_30, "t", 1));
      assertThat(history(queries, "other")).containsExactly(at(FEB_1, "other", 9));
      assertThat(latest(queries, "t")).containsExactly(at(MAR_1, "t", 5));
    }
  }

  @Test
  void should_make_the_newest_remaining_value_latest_when_rewriting_the_latest() {
    for (CassandraTelemetryStore store : List.of(derived, table)) {
      newDevice();
      CassandraTelemetryQueries queries = store == derived ? derivedQueries : tableQueries;
      write(store, at(JAN_30, "t", 1), at(FEB_1, "t", 2), at(MAR_1, "t", 3), at(MAR_1, "u", 7));

      await(store.deleteTelemetry(device, Set.of("t"), FEB_1, TimestampRange.MAX, true));

      assertThat(latest(queries, "t")).as("%s", store).containsExactly(at(JAN_30, "t", 1));
      assertThat(await(queries.keys(device))).containsExactly("t", "u");
      assertThat(history(queries, "t")).containsExactly(at(JAN_30, "t", 1));
    }
  }

  @Test
  void should_leave_the_key_without_latest_value_when_not_rewriting_until_a_newer_value() {
    for (CassandraTelemetryStore store : List.of(derived, table)) {
      newDevice();
      CassandraTelemetryQueries queries = store == derived ? derivedQueries : tableQueries;
      write(store, at(JAN_30, "t", 1), at(MAR_1, "t", 3), at(MAR_1, "u", 7));

      await(store.deleteTelemetry(device, Set.of("t"), FEB_1, APR_1, false));

      assertThat(latest(queries, "t")).as("%s", store).isEmpty();
      assertThat(await(queries.keys(device))).containsExactly("u");
      assertThat(history(queries, "t")).as("older values stay").containsExactly(at(JAN_30, "t", 1));

      write(store, at(APR_1, "t", 4));

      assertThat(latest(queries, "t")).containsExactly(at(APR_1, "t", 4));
      assertThat(await(queries.keys(device))).containsExactly("t", "u");
    }
  }

  @Test
  void should_forget_the_key_when_all_its_data_is_deleted_and_find_it_again_when_rewritten() {
    for (CassandraTelemetryStore store : List.of(derived, table)) {
      newDevice();
      CassandraTelemetryQueries queries = store == derived ? derivedQueries : tableQueries;
      write(store, at(JAN_30, "t", 1), at(JAN_30 + 1, "t", 2), at(FEB_1, "u", 7));

      deleteAll(store, "t", true);

      assertThat(await(queries.keys(device))).as("%s", store).containsExactly("u");
      assertThat(latest(queries, "t")).isEmpty();
      assertThat(history(queries, "t")).isEmpty();
      assertThat(await(store.readLatest(device))).containsExactly(at(FEB_1, "u", 7));

      // Newer than the deleted latest value, into the bucket whose index row the delete removed:
      // the index row is written again and the value found.
      write(store, at(JAN_31, "t", 5));

      assertThat(await(queries.keys(device))).containsExactly("t", "u");
      assertThat(latest(queries, "t")).containsExactly(at(JAN_31, "t", 5));
    }
  }

  @Test
  void should_remove_the_index_rows_of_past_buckets_emptied_by_the_delete() {
    write(derived, at(JAN_30, "t", 1), at(FEB_1, "t", 2), at(MAR_1, "t", 3));

    await(derived.deleteTelemetry(device, Set.of("t"), FEB_1, APR_1, true));

    List<Long> parts =
        session
            .execute(
                "SELECT part FROM " + keyspace + ".ts_kv_keys WHERE device_id = ? AND key = 't'",
                device.value())
            .all()
            .stream()
            .map(row -> row.getLong(0))
            .toList();
    assertThat(parts).containsExactly(config.tsPartitioning().partitionOf(JAN_30));
  }

  @Test
  void should_keep_a_value_written_after_the_latest_was_cleared_when_reading_a_key_list() {
    // The current bucket keeps its index row (another node may remember it as written): the key
    // is listed again as soon as a value newer than the deleted latest arrives in it.
    long now = System.currentTimeMillis();
    write(derived, at(now - 1_000, "t", 1));

    deleteAll(derived, "t", false);
    assertThat(await(derivedQueries.keys(device))).isEmpty();

    write(derived, at(now, "t", 2));

    assertThat(await(derivedQueries.keys(device))).containsExactly("t");
    assertThat(latest(derivedQueries, "t")).containsExactly(at(now, "t", 2));
  }

  @Test
  void should_do_nothing_when_the_range_is_empty_or_the_key_unknown() {
    write(derived, at(FEB_1, "t", 2));

    await(derived.deleteTelemetry(device, Set.of("t"), FEB_2, FEB_1, true));
    await(derived.deleteTelemetry(device, Set.of("nope"), TimestampRange.MIN, FEB_2, true));
    await(derived.deleteTelemetry(device, Set.of(), TimestampRange.MIN, FEB_2, true));

    assertThat(latest(derivedQueries, "t")).containsExactly(at(FEB_1, "t", 2));
  }
}
