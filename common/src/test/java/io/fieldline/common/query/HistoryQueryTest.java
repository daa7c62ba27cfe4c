package io.fieldline.common.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.Set;
import org.junit.jupiter.api.Test;

class HistoryQueryTest {

  @Test
  void should_refuse_the_query_when_no_key_is_asked_for() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HistoryQuery.raw(Set.of(), 0, 10))
        .withMessageContaining("keys");
  }

  @Test
  void should_refuse_the_query_when_the_end_is_before_the_start() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HistoryQuery.raw(Set.of("t"), 10, 9))
        .withMessageContaining("endTs");
  }

  @Test
  void should_refuse_the_query_when_the_limit_is_below_one() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HistoryQuery.raw(Set.of("t"), 0, 10).withLimit(0))
        .withMessageContaining("limit");
  }

  @Test
  void should_refuse_an_aggregation_when_its_interval_is_below_one_millisecond() {
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HistoryQuery.aggregated(Set.of("t"), 0, 10, 0, Aggregation.AVG))
        .withMessageContaining("interval");
  }

  @Test
  void should_refuse_an_aggregation_when_it_asks_for_more_buckets_than_the_maximum() {
    long end = (HistoryQuery.MAX_BUCKETS + 1) * 1000L;
    assertThatIllegalArgumentException()
        .isThrownBy(() -> HistoryQuery.aggregated(Set.of("t"), 0, end, 1000, Aggregation.MAX))
        .withMessageContaining("too many intervals");
  }

  @Test
  void should_accept_exactly_the_maximum_when_the_last_bucket_is_full() {
    long end = HistoryQuery.MAX_BUCKETS * 1000L;

    assertThat(HistoryQuery.aggregated(Set.of("t"), 0, end, 1000, Aggregation.MAX).interval())
        .isEqualTo(1000);
  }

  @Test
  void should_count_a_partial_last_bucket_when_the_span_is_not_a_multiple() {
    assertThat(HistoryQuery.bucketCount(0, 2500, 1000)).isEqualTo(3);
    assertThat(HistoryQuery.bucketCount(0, 2000, 1000)).isEqualTo(2);
    assertThat(HistoryQuery.bucketCount(5, 5, 1000)).isZero();
  }

  @Test
  void should_ignore_the_interval_when_the_query_is_raw() {
    assertThat(HistoryQuery.raw(Set.of("t"), 0, Long.MAX_VALUE).aggregation())
        .isEqualTo(Aggregation.NONE);
  }
}
