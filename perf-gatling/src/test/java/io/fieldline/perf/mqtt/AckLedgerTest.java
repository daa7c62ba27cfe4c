package io.fieldline.perf.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class AckLedgerTest {

  @Test
  void should_keep_one_range_when_acks_arrive_in_order() {
    AckLedger ledger = new AckLedger("token-1", 1_000);
    for (int i = 0; i < 5; i++) {
      ledger.acked(ledger.nextSequence());
    }

    assertThat(ledger.sent()).isEqualTo(5);
    assertThat(ledger.ackedCount()).isEqualTo(5);
    assertThat(ledger.ackedRanges()).isEqualTo("0-4");
    assertThat(ledger.toCsvLine()).isEqualTo("token-1,1000,5,0-4");
  }

  @Test
  void should_split_ranges_when_a_message_was_not_acknowledged() {
    AckLedger ledger = new AckLedger("t", 0);
    long first = ledger.nextSequence();
    long lost = ledger.nextSequence();
    long third = ledger.nextSequence();
    ledger.acked(first);
    ledger.acked(third);

    assertThat(lost).isEqualTo(1);
    assertThat(ledger.ackedCount()).isEqualTo(2);
    assertThat(ledger.ackedRanges()).isEqualTo("0-0|2-2");
  }

  @Test
  void should_grow_when_many_gaps_are_recorded() {
    AckLedger ledger = new AckLedger("t", 0);
    for (int i = 0; i < 100; i++) {
      long sequence = ledger.nextSequence();
      if (sequence % 2 == 0) {
        ledger.acked(sequence);
      }
    }

    assertThat(ledger.ackedCount()).isEqualTo(50);
    assertThat(ledger.ackedRanges().split("\\|")).hasSize(50);
  }
}
