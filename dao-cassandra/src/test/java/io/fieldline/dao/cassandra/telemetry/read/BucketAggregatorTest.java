package io.fieldline.dao.cassandra.telemetry.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.common.query.Aggregation;
import io.fieldline.common.query.HistoryQuery;
import io.fieldline.common.query.SortOrder;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BucketAggregatorTest {

  private static BucketAggregator filled(Aggregation aggregation) {
    // [0, 25) in buckets of 10: [0,10) [10,20) [20,25)
    BucketAggregator agg = new BucketAggregator(aggregation, 0, 25, 10);
    agg.add(1, KvEntry.of("t", 4L));
    agg.add(2, KvEntry.of("t", 6L));
    agg.add(9, KvEntry.of("t", "text"));
    agg.add(12, KvEntry.of("t", 1.5));
    agg.add(13, KvEntry.of("t", 2L));
    agg.add(21, KvEntry.of("t", true));
    agg.add(25, KvEntry.of("t", 100L)); // outside [start, end)
    return agg;
  }

  @Test
  void should_stamp_buckets_at_their_midpoint_when_rendering() {
    List<TsKvEntry> result = filled(Aggregation.COUNT).result("t", SortOrder.ASC);

    assertThat(result).extracting(TsKvEntry::ts).containsExactly(5L, 15L, 22L);
  }

  @Test
  void should_count_every_value_type_when_count() {
    assertThat(filled(Aggregation.COUNT).result("t", SortOrder.ASC))
        .extracting(e -> e.kv().value())
        .containsExactly(3L, 2L, 1L);
  }

  @Test
  void should_keep_longs_or_widen_to_double_when_min_max_sum() {
    assertThat(filled(Aggregation.MIN).result("t", SortOrder.ASC))
        .containsExactly(
            new TsKvEntry(5, KvEntry.of("t", 4L)), new TsKvEntry(15, KvEntry.of("t", 1.5)));
    assertThat(filled(Aggregation.MAX).result("t", SortOrder.ASC))
        .containsExactly(
            new TsKvEntry(5, KvEntry.of("t", 6L)), new TsKvEntry(15, KvEntry.of("t", 2.0)));
    assertThat(filled(Aggregation.SUM).result("t", SortOrder.ASC))
        .containsExactly(
            new TsKvEntry(5, KvEntry.of("t", 10L)), new TsKvEntry(15, KvEntry.of("t", 3.5)));
  }

  @Test
  void should_average_numeric_values_as_double_when_avg() {
    assertThat(filled(Aggregation.AVG).result("t", SortOrder.DESC))
        .containsExactly(
            new TsKvEntry(15, KvEntry.of("t", 1.75)), new TsKvEntry(5, KvEntry.of("t", 5.0)));
  }

  @Test
  void should_fall_back_to_double_when_a_long_sum_overflows() {
    BucketAggregator agg = new BucketAggregator(Aggregation.SUM, 0, 10, 10);
    agg.add(1, KvEntry.of("t", Long.MAX_VALUE));
    agg.add(2, KvEntry.of("t", 1L));

    assertThat(agg.result("t", SortOrder.ASC).get(0).kv())
        .isEqualTo(KvEntry.of("t", (double) Long.MAX_VALUE + 1));
  }

  @Test
  void should_reject_more_than_700_buckets_when_building_the_query() {
    assertThat(HistoryQuery.aggregated(Set.of("t"), 0, 700, 1, Aggregation.AVG).interval())
        .isEqualTo(1);
    assertThatThrownBy(() -> HistoryQuery.aggregated(Set.of("t"), 0, 701, 1, Aggregation.AVG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("701");
    assertThatThrownBy(() -> HistoryQuery.aggregated(Set.of("t"), 0, 10, 0, Aggregation.MIN))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
