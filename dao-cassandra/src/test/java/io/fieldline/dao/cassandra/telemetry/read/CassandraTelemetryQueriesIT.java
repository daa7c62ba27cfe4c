package io.fieldline.dao.cassandra.telemetry.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.Aggregation;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.SortOrder;
import io.fieldline.dao.cassandra.CassandraTestBase;
import io.fieldline.dao.cassandra.cql.ReadLimiter;
import io.fieldline.dao.cassandra.cql.WriteLimiter;
import io.fieldline.dao.cassandra.telemetry.write.CassandraTelemetryStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** History reads over a fixed data set written once, in DAYS partitions. */
class CassandraTelemetryQueriesIT extends CassandraTestBase {

  private static final long DAY = 86_400_000L;

  /** 2024-01-01T00:00:00Z. */
  private static final long T0 = 1_704_067_200_000L;

  private CassandraTelemetryQueries queries;
  private final DeviceId device = DeviceId.random();

  @Override
  protected String extraConfig() {
    return "fieldline.cassandra.ts-partitioning = DAYS";
  }

  @BeforeAll
  void writeData() {
    CassandraTelemetryStore store =
        new CassandraTelemetryStore(session, config, WriteLimiter.from(config), registry);
    queries =
        new CassandraTelemetryQueries(
            session, config, ReadLimiter.from(config.reads(), () -> false));
    // "n": one long per hour for three days (72 values, 0..71) across three DAYS partitions;
    // "s": a string at each whole day; "d": doubles in the first hour.
    for (int hour = 0; hour < 72; hour++) {
      List<TsKvEntry> message = new ArrayList<>();
      long ts = T0 + hour * 3_600_000L;
      message.add(new TsKvEntry(ts, KvEntry.of("n", (long) hour)));
      if (hour % 24 == 0) {
        message.add(new TsKvEntry(ts, KvEntry.of("s", "day" + hour / 24)));
      }
      await(store.writeTelemetry(device, message));
    }
    await(
        store.writeTelemetry(
            device,
            List.of(
                new TsKvEntry(T0 + 1, KvEntry.of("d", 1.5)),
                new TsKvEntry(T0 + 2, KvEntry.of("d", 2.5)))));
  }

  private Map<String, List<TsKvEntry>> history(HistoryQuery query) {
    return await(queries.history(device, query));
  }

  @Test
  void should_list_keys_sorted_and_latest_values_filtered_when_asked() {
    assertThat(await(queries.keys(device))).containsExactly("d", "n", "s");
    assertThat(await(queries.latest(device, Optional.of(Set.of("n", "s")))))
        .containsExactly(
            new TsKvEntry(T0 + 71 * 3_600_000L, KvEntry.of("n", 71L)),
            new TsKvEntry(T0 + 48 * 3_600_000L, KvEntry.of("s", "day2")));
    assertThat(await(queries.latest(device, Optional.empty()))).hasSize(3);
  }

  @Test
  void should_return_the_newest_values_across_partitions_when_limit_is_smaller() {
    List<TsKvEntry> values =
        history(HistoryQuery.raw(Set.of("n"), T0, T0 + 3 * DAY).withLimit(30)).get("n");

    assertThat(values).hasSize(30);
    assertThat(values.get(0).kv().value()).isEqualTo(71L);
    assertThat(values.get(29).kv().value()).isEqualTo(42L); // crossed from day 3 into day 2
    assertThat(values).isSortedAccordingTo((a, b) -> Long.compare(b.ts(), a.ts()));
  }

  @Test
  void should_return_the_oldest_values_first_when_order_is_asc() {
    List<TsKvEntry> values =
        history(
                HistoryQuery.raw(Set.of("n"), T0 + 3_600_000L, T0 + 3 * DAY)
                    .withLimit(30)
                    .withOrder(SortOrder.ASC))
            .get("n");

    assertThat(values).extracting(e -> e.kv().value()).startsWith(1L, 2L, 3L).endsWith(30L);
  }

  @Test
  void should_return_each_key_separately_and_omit_keys_without_values_when_several_keys() {
    Map<String, List<TsKvEntry>> result =
        history(HistoryQuery.raw(Set.of("n", "s", "missing"), T0, T0 + DAY).withLimit(1000));

    assertThat(result.keySet()).containsExactly("n", "s");
    assertThat(result.get("n")).hasSize(24);
    assertThat(result.get("s")).containsExactly(new TsKvEntry(T0, KvEntry.of("s", "day0")));
  }

  @Test
  void should_aggregate_per_day_at_bucket_midpoints_when_interval_is_a_day() {
    HistoryQuery query =
        HistoryQuery.aggregated(Set.of("n"), T0, T0 + 3 * DAY, DAY, Aggregation.AVG);

    assertThat(history(query).get("n"))
        .containsExactly(
            new TsKvEntry(T0 + 2 * DAY + DAY / 2, KvEntry.of("n", 59.5)),
            new TsKvEntry(T0 + DAY + DAY / 2, KvEntry.of("n", 35.5)),
            new TsKvEntry(T0 + DAY / 2, KvEntry.of("n", 11.5)));
  }

  @Test
  void should_compute_each_aggregation_when_asked() {
    long end = T0 + 2 * DAY;
    assertThat(values(Aggregation.MIN, end)).containsExactly(0L, 24L);
    assertThat(values(Aggregation.MAX, end)).containsExactly(23L, 47L);
    assertThat(values(Aggregation.SUM, end)).containsExactly(276L, 852L);
    assertThat(values(Aggregation.COUNT, end)).containsExactly(24L, 24L);
    assertThat(values(Aggregation.AVG, end)).containsExactly(11.5, 35.5);
  }

  @Test
  void should_count_strings_but_skip_them_in_numeric_aggregates_when_mixed() {
    HistoryQuery count =
        HistoryQuery.aggregated(Set.of("s", "d"), T0, T0 + DAY, DAY, Aggregation.COUNT);
    HistoryQuery max =
        HistoryQuery.aggregated(Set.of("s", "d"), T0, T0 + DAY, DAY, Aggregation.MAX);

    assertThat(history(count).get("s")).extracting(e -> e.kv().value()).containsExactly(1L);
    assertThat(history(max)).containsOnlyKeys("d");
    assertThat(history(max).get("d")).extracting(e -> e.kv().value()).containsExactly(2.5);
  }

  @Test
  void should_reject_more_than_700_buckets_when_the_interval_is_too_small() {
    assertThatThrownBy(
            () ->
                queries.history(
                    device,
                    new HistoryQuery(
                        Set.of("n"), T0, T0 + 701, 1, 100, Aggregation.MIN, SortOrder.DESC)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Measures Java-side aggregation against ThingsBoard's shape (one CQL aggregate query per bucket)
   * over 50,000 values in one partition, 700 buckets. Prints both; asserts they agree.
   */
  @Test
  void should_match_cql_aggregates_when_folding_50k_values_in_java() {
    DeviceId dense = DeviceId.random();
    CassandraTelemetryStore store =
        new CassandraTelemetryStore(session, config, WriteLimiter.from(config), registry);
    int values = 50_000;
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (int m = 0; m < values / 100; m++) {
      List<TsKvEntry> message = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        int n = m * 100 + i;
        message.add(new TsKvEntry(T0 + n, KvEntry.of("v", (double) (n % 1000))));
      }
      writes.add(store.writeTelemetry(dense, message).toCompletableFuture());
    }
    writes.forEach(w -> await(w));
    HistoryQuery query =
        HistoryQuery.aggregated(Set.of("v"), T0, T0 + values, values / 700 + 1, Aggregation.AVG)
            .withOrder(SortOrder.ASC);

    PreparedStatement cqlAvg =
        session.prepare(
            "SELECT sum(dbl_v), count(dbl_v) FROM "
                + keyspace
                + ".ts_kv WHERE device_id = ?"
                + " AND part = ? AND key = 'v' AND ts >= ? AND ts < ?");
    List<TsKvEntry> folded = List.of();
    List<Double> cql = List.of();
    long javaNanos = 0;
    long cqlNanos = 0;
    // Twice each: the second round is measured with warm JIT on both sides.
    for (int round = 0; round < 2; round++) {
      long javaStart = System.nanoTime();
      folded = await(queries.history(dense, query)).get("v");
      javaNanos = System.nanoTime() - javaStart;
      long cqlStart = System.nanoTime();
      cql = cqlAverages(cqlAvg, dense, query);
      cqlNanos = System.nanoTime() - cqlStart;
    }
    System.out.printf(
        "AVG of %d values in %d buckets: Java fold %.0f ms, CQL aggregate per bucket %.0f ms%n",
        values, folded.size(), javaNanos / 1e6, cqlNanos / 1e6);
    assertThat(folded).hasSize(cql.size());
    for (int i = 0; i < cql.size(); i++) {
      assertThat((Double) folded.get(i).kv().value()).isCloseTo(cql.get(i), Offset.offset(1e-9));
    }
  }

  // ThingsBoard's shape: one aggregate query per bucket (one partition here), all in parallel.
  private List<Double> cqlAverages(PreparedStatement avg, DeviceId device, HistoryQuery query) {
    long part = config.tsPartitioning().partitionOf(query.startTs());
    List<CompletableFuture<Double>> buckets = new ArrayList<>();
    for (long from = query.startTs(); from < query.endTs(); from += query.interval()) {
      long to = Math.min(from + query.interval(), query.endTs());
      buckets.add(
          session
              .executeAsync(avg.bind(device.value(), part, from, to))
              .thenApply(
                  rs -> {
                    Row row = rs.one();
                    return row.getDouble(0) / row.getLong(1);
                  })
              .toCompletableFuture());
    }
    return buckets.stream().map(f -> await(f)).toList();
  }

  private List<Object> values(Aggregation aggregation, long end) {
    return history(
            HistoryQuery.aggregated(Set.of("n"), T0, end, DAY, aggregation)
                .withOrder(SortOrder.ASC))
        .get("n")
        .stream()
        .map(e -> e.kv().value())
        .toList();
  }
}
