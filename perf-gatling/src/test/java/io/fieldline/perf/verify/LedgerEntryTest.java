package io.fieldline.perf.verify;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LedgerEntryTest {

  @Test
  void should_read_acknowledged_ranges_when_parsed() {
    LedgerEntry entry = LedgerEntry.parse("tok-1,1000,10,0-3|5-5|7-9");

    assertThat(entry.username()).isEqualTo("tok-1");
    assertThat(entry.baseTs()).isEqualTo(1000);
    assertThat(entry.sent()).isEqualTo(10);
    assertThat(entry.ackedCount()).isEqualTo(8);
    assertThat(entry.acked().get(4)).isFalse();
    assertThat(entry.acked().get(6)).isFalse();
    assertThat(entry.acked().get(9)).isTrue();
  }

  @Test
  void should_have_nothing_acknowledged_when_ranges_are_empty() {
    LedgerEntry entry = LedgerEntry.parse("tok-2,5,3,");

    assertThat(entry.sent()).isEqualTo(3);
    assertThat(entry.ackedCount()).isZero();
  }
}
