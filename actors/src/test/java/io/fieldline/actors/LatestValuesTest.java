package io.fieldline.actors;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LatestValuesTest {

  private final LatestValues latest = new LatestValues();

  private static TsKvEntry temp(long ts, long value) {
    return new TsKvEntry(ts, KvEntry.of("temp", value));
  }

  @Test
  void should_keep_the_newer_value_when_an_older_one_arrives_later() {
    latest.advance(List.of(temp(200, 2)));
    latest.advance(List.of(temp(100, 1)));

    assertThat(latest.snapshot()).containsExactly(Map.entry("temp", temp(200, 2)));
  }

  @Test
  void should_take_the_later_value_when_timestamps_are_equal() {
    latest.advance(List.of(temp(100, 1), temp(100, 7)));

    assertThat(latest.snapshot()).containsExactly(Map.entry("temp", temp(100, 7)));
  }

  @Test
  void should_not_change_a_snapshot_when_values_advance_afterwards() {
    latest.advance(List.of(temp(100, 1)));
    Map<String, TsKvEntry> before = latest.snapshot();

    latest.advance(List.of(temp(300, 3), new TsKvEntry(300, KvEntry.of("hum", 40L))));

    assertThat(before).containsExactly(Map.entry("temp", temp(100, 1)));
    assertThat(latest.snapshot()).hasSize(2).containsEntry("temp", temp(300, 3));
  }
}
