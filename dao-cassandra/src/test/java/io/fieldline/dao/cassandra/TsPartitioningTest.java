package io.fieldline.dao.cassandra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.kv.TimestampRange;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TsPartitioningTest {

  private static long ms(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  @Test
  void should_truncate_to_the_minute_in_utc_when_minutes() {
    assertThat(TsPartitioning.MINUTES.partitionOf(ms("2024-03-10T12:34:56.789Z")))
        .isEqualTo(ms("2024-03-10T12:34:00Z"));
  }

  @Test
  void should_truncate_to_the_hour_in_utc_when_hours() {
    assertThat(TsPartitioning.HOURS.partitionOf(ms("2024-03-10T12:34:56.789Z")))
        .isEqualTo(ms("2024-03-10T12:00:00Z"));
  }

  @Test
  void should_truncate_to_utc_midnight_when_days() {
    assertThat(TsPartitioning.DAYS.partitionOf(ms("2024-03-10T23:59:59.999Z")))
        .isEqualTo(ms("2024-03-10T00:00:00Z"));
    assertThat(TsPartitioning.DAYS.partitionOf(ms("2024-03-11T00:00:00Z")))
        .isEqualTo(ms("2024-03-11T00:00:00Z"));
  }

  @Test
  void should_truncate_to_the_first_of_the_month_when_months() {
    assertThat(TsPartitioning.MONTHS.partitionOf(ms("2024-02-29T23:59:59.999Z")))
        .isEqualTo(ms("2024-02-01T00:00:00Z"));
    assertThat(TsPartitioning.MONTHS.partitionOf(ms("2024-03-01T00:00:00Z")))
        .isEqualTo(ms("2024-03-01T00:00:00Z"));
  }

  @Test
  void should_truncate_to_january_first_when_years() {
    assertThat(TsPartitioning.YEARS.partitionOf(ms("2023-12-31T23:59:59.999Z")))
        .isEqualTo(ms("2023-01-01T00:00:00Z"));
    assertThat(TsPartitioning.YEARS.partitionOf(ms("2024-01-01T00:00:00Z")))
        .isEqualTo(ms("2024-01-01T00:00:00Z"));
  }

  @Test
  void should_always_be_zero_when_indefinite() {
    assertThat(TsPartitioning.INDEFINITE.partitionOf(ms("2024-03-10T12:34:56Z"))).isZero();
    assertThat(TsPartitioning.INDEFINITE.partitionOf(-5)).isZero();
    assertThat(TsPartitioning.INDEFINITE.nextPartition(0)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void should_floor_negative_timestamps_when_before_the_epoch() {
    assertThat(TsPartitioning.DAYS.partitionOf(-1)).isEqualTo(ms("1969-12-31T00:00:00Z"));
    assertThat(TsPartitioning.MONTHS.partitionOf(-1)).isEqualTo(ms("1969-12-01T00:00:00Z"));
  }

  @Test
  void should_step_over_month_lengths_when_next_partition_of_months() {
    assertThat(TsPartitioning.MONTHS.nextPartition(ms("2024-02-01T00:00:00Z")))
        .isEqualTo(ms("2024-03-01T00:00:00Z"));
    assertThat(TsPartitioning.YEARS.nextPartition(ms("2024-01-01T00:00:00Z")))
        .isEqualTo(ms("2025-01-01T00:00:00Z"));
  }

  @ParameterizedTest
  @EnumSource(
      value = TsPartitioning.class,
      names = {"INDEFINITE"},
      mode = EnumSource.Mode.EXCLUDE)
  void should_place_last_ms_and_next_partition_start_apart_when_at_a_boundary(TsPartitioning unit) {
    long part = unit.partitionOf(ms("2024-06-15T10:20:30.400Z"));
    long next = unit.nextPartition(part);
    assertThat(unit.partitionOf(next - 1)).isEqualTo(part);
    assertThat(unit.partitionOf(next)).isEqualTo(next);
    assertThat(unit.partitionOf(part)).isEqualTo(part);
  }

  @Test
  void should_agree_with_zoned_date_time_when_months_and_years_anywhere_in_the_storable_range() {
    SplittableRandom random = new SplittableRandom(12);
    long[] edges = {TimestampRange.MIN, TimestampRange.MAX, -1, 0, ms("2024-02-29T23:59:59.999Z")};
    for (int i = 0; i < 20_000; i++) {
      long ts =
          i < edges.length ? edges[i] : random.nextLong(TimestampRange.MIN, TimestampRange.MAX);
      ZonedDateTime utc = Instant.ofEpochMilli(ts).atZone(ZoneOffset.UTC);
      long month = utc.withDayOfMonth(1).truncatedTo(ChronoUnit.DAYS).toInstant().toEpochMilli();
      long year = utc.withDayOfYear(1).truncatedTo(ChronoUnit.DAYS).toInstant().toEpochMilli();

      assertThat(TsPartitioning.MONTHS.partitionOf(ts)).as("month of %d", ts).isEqualTo(month);
      assertThat(TsPartitioning.YEARS.partitionOf(ts)).as("year of %d", ts).isEqualTo(year);
    }
  }
}
