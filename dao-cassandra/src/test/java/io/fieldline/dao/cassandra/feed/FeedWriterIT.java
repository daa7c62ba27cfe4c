package io.fieldline.dao.cassandra.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.LocalFeed;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraTestBase;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * This process's feed log in memory: positions, settling, the tail, the in-flight bound and the
 * hybrid clock. An IT only because the writer prepares its insert and records its log with a
 * session at construction; nothing here reads the feed back from Cassandra.
 */
class FeedWriterIT extends CassandraTestBase {

  private static final DeviceId DEVICE = DeviceId.random();
  private static final long T0 = 1_700_000_000_000L;

  private final AtomicLong clock = new AtomicLong(T0);

  @BeforeEach
  void resetClock() {
    clock.set(T0); // one instance for the class's tests
  }

  private FeedWriter writer(int memoryEntries) {
    return new FeedWriter(
        session,
        keyspace,
        new FeedConfig(true, Duration.ofHours(1), memoryEntries, "node-a"),
        config.writeConsistency(),
        15_000,
        clock::get);
  }

  private static FeedWriter.Appended append(FeedWriter writer) {
    return writer.telemetry(DEVICE, List.of(new TsKvEntry(T0, KvEntry.of("t", 1L))));
  }

  private static List<Long> positions(LocalFeed.Tail tail) {
    return tail.entries().stream().map(FeedEntry::position).toList();
  }

  @Test
  void should_hand_out_positions_from_one_in_call_order() {
    FeedWriter writer = writer(16);

    assertThat(append(writer).position()).isEqualTo(1);
    assertThat(writer.attributes(DEVICE, AttributeScope.SERVER_SCOPE, List.of(), T0).position())
        .isEqualTo(2);
    assertThat(append(writer).position()).isEqualTo(3);
    assertThat(writer.appended()).isEqualTo(3);
  }

  @Test
  void should_start_a_new_log_from_position_one_when_rotated_and_settle_the_old_one_apart() {
    FeedWriter writer = writer(16);
    UUID first = writer.logId();
    FeedWriter.Appended before = append(writer);

    writer.rotate();

    assertThat(writer.logId()).isNotEqualTo(first);
    assertThat(writer.settledPosition()).isZero();
    FeedWriter.Appended after = append(writer);
    assertThat(after.position()).isEqualTo(1);
    // The old log's write completes late: it settles there, not in the new log.
    writer.settle(before, true);
    assertThat(writer.settledPosition()).isZero();
    assertThat(writer.tail(first, 0, 10)).as("the old log is no longer in memory").isNull();
    writer.settle(after, true);
    assertThat(writer.settledPosition()).isEqualTo(1);
    assertThat(positions(writer.tail(0, 10))).containsExactly(1L);
  }

  @Test
  void should_not_count_a_write_completing_after_the_lease_less_the_margin_and_rotate_once() {
    FeedWriter writer = writer(16);
    UUID first = writer.logId();
    FeedWriter.Appended inTime = append(writer);
    FeedWriter.Appended late = append(writer);
    FeedWriter.Appended alsoLate = append(writer);
    writer.leaseHeld(first, T0 + 15_000);

    clock.set(T0 + 15_000 - FeedWriter.FENCE_MARGIN_MILLIS);
    assertThat(writer.settle(inTime, true)).as("at the fence: still counts").isTrue();
    clock.set(T0 + 15_000 - FeedWriter.FENCE_MARGIN_MILLIS + 1);
    assertThat(writer.settle(late, true)).isFalse();
    UUID second = writer.logId();
    assertThat(second).isNotEqualTo(first);
    assertThat(writer.settle(alsoLate, true)).isFalse();
    assertThat(writer.logId()).as("one rotation per fenced log").isEqualTo(second);
    assertThat(writer.fenced()).isEqualTo(2);
    // A lease renewal of the old log no longer moves anything: the new log has no fence yet.
    writer.leaseHeld(first, T0 + 60_000);
    FeedWriter.Appended next = append(writer);
    clock.set(T0 + 1_000_000);
    assertThat(writer.settle(next, true)).isTrue();
    assertThat(positions(writer.tail(0, 10))).containsExactly(1L);
  }

  @Test
  void should_count_writes_at_any_time_while_no_lease_was_reported() {
    FeedWriter writer = writer(16);
    FeedWriter.Appended row = append(writer);
    clock.set(T0 + 1_000_000_000L);

    assertThat(writer.settle(row, true)).isTrue();
    assertThat(writer.fenced()).isZero();
  }

  @Test
  void should_advance_the_settled_position_only_over_contiguous_settled_positions() {
    FeedWriter writer = writer(16);
    AtomicInteger advances = new AtomicInteger();
    writer.onSettled(advances::incrementAndGet);
    for (int i = 0; i < 5; i++) {
      append(writer);
    }

    writer.settle(3, true);
    writer.settle(2, false);
    assertThat(writer.settledPosition()).as("1 is still in flight").isZero();
    assertThat(advances).hasValue(0);

    writer.settle(1, true);
    assertThat(writer.settledPosition()).isEqualTo(3);
    assertThat(advances).hasValue(1);

    writer.settle(5, true);
    assertThat(writer.settledPosition()).isEqualTo(3);
    assertThat(advances).hasValue(1);

    writer.settle(4, false);
    assertThat(writer.settledPosition()).isEqualTo(5);
    assertThat(advances).hasValue(2);
  }

  @Test
  void should_skip_failed_positions_in_the_tail_while_through_covers_them() {
    FeedWriter writer = writer(16);
    for (int i = 0; i < 6; i++) {
      append(writer);
    }
    writer.settle(1, true);
    writer.settle(2, false);
    writer.settle(3, true);
    writer.settle(4, false);
    writer.settle(5, false);
    // 6 stays in flight: never given out.

    LocalFeed.Tail all = writer.tail(0, 100);
    assertThat(positions(all)).containsExactly(1L, 3L);
    assertThat(all.through()).isEqualTo(5);

    LocalFeed.Tail one = writer.tail(0, 1);
    assertThat(positions(one)).containsExactly(1L);
    assertThat(one.through()).isEqualTo(1);

    LocalFeed.Tail afterFirst = writer.tail(1, 1);
    assertThat(positions(afterFirst)).containsExactly(3L);
    assertThat(afterFirst.through()).as("the failed 2 is passed over").isEqualTo(3);

    LocalFeed.Tail onlyFailed = writer.tail(3, 100);
    assertThat(onlyFailed.entries()).isEmpty();
    assertThat(onlyFailed.through()).isEqualTo(5);
  }

  @Test
  void should_return_null_from_the_tail_when_memory_no_longer_reaches_after() {
    FeedWriter writer = writer(4);
    for (int i = 0; i < 10; i++) {
      writer.settle(append(writer).position(), true);
    }

    LocalFeed.Tail oldestKept = writer.tail(6, 100);
    assertThat(oldestKept).isNotNull();
    assertThat(positions(oldestKept)).containsExactly(7L, 8L, 9L, 10L);
    assertThat(oldestKept.through()).isEqualTo(10);
    assertThat(writer.tail(5, 100)).as("position 6 was overwritten by 10").isNull();
    assertThat(writer.inMemory()).isEqualTo(4);
  }

  @Test
  void should_refuse_as_overloaded_when_one_more_write_than_memory_entries_is_in_flight() {
    FeedWriter writer = writer(4);
    for (int i = 0; i < 4; i++) {
      append(writer);
    }

    assertThatThrownBy(() -> append(writer))
        .isInstanceOfSatisfying(
            StoreException.class,
            e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.OVERLOADED));
    assertThatThrownBy(() -> writer.attributes(DEVICE, AttributeScope.CLIENT_SCOPE, List.of(), T0))
        .isInstanceOf(StoreException.class);
    assertThat(writer.appended()).as("a refused append takes no position").isEqualTo(4);

    writer.settle(2, true);
    assertThatThrownBy(() -> append(writer))
        .as("2 settled but 1 did not: the settled position has not moved")
        .isInstanceOf(StoreException.class);

    writer.settle(1, false);
    assertThat(append(writer).position()).isEqualTo(5);
    assertThat(append(writer).position()).isEqualTo(6);
    assertThatThrownBy(() -> append(writer)).isInstanceOf(StoreException.class);
    // The entries of 1 and 2 were overwritten only once settled: 3 and 4 are still in flight.
    writer.settle(3, true);
    writer.settle(4, true);
    writer.settle(5, true);
    writer.settle(6, true);
    assertThat(positions(writer.tail(2, 100))).containsExactly(3L, 4L, 5L, 6L);
  }

  @Test
  void should_keep_sequence_numbers_strictly_increasing_when_the_clock_goes_back() {
    FeedWriter writer = writer(64);
    long last = Long.MIN_VALUE;
    long[] clockSteps = {T0, T0, T0 - 60_000, T0 - 1, T0 + 1, T0 + 1, T0 - 3_600_000, T0 + 5};
    for (long now : clockSteps) {
      clock.set(now);
      long position = append(writer).position();
      writer.settle(position, true);
      long seq = entry(writer, position).seq();
      assertThat(seq).as("at clock %d", now).isGreaterThan(last);
      assertThat(seq).isGreaterThanOrEqualTo(now * 1000);
      last = seq;
    }
    clock.set(T0 + 10);
    long position = append(writer).position();
    writer.settle(position, true);
    assertThat(entry(writer, position).seq())
        .as("the wall clock again once it is ahead")
        .isEqualTo((T0 + 10) * 1000);
  }

  private static FeedEntry entry(FeedWriter writer, long position) {
    LocalFeed.Tail tail = writer.tail(position - 1, 1);
    assertThat(tail).isNotNull();
    assertThat(tail.entries()).hasSize(1);
    return tail.entries().get(0);
  }

  @Test
  void should_reserve_one_sequence_number_per_distinct_timestamp_when_telemetry_has_several() {
    FeedWriter writer = writer(16);
    FeedWriter.Appended first =
        writer.telemetry(
            DEVICE,
            List.of(
                new TsKvEntry(T0 - 3, KvEntry.of("a", 1L)),
                new TsKvEntry(T0 - 3, KvEntry.of("b", 2L)),
                new TsKvEntry(T0 - 2, KvEntry.of("a", 3L)),
                new TsKvEntry(T0 - 1, KvEntry.of("a", 4L)),
                new TsKvEntry(T0 - 2, KvEntry.of("b", 5L))));
    FeedWriter.Appended attributes =
        writer.attributes(DEVICE, AttributeScope.SHARED_SCOPE, List.of(KvEntry.of("x", true)), T0);
    FeedWriter.Appended next = append(writer);
    for (long position = 1; position <= 3; position++) {
      writer.settle(position, true);
    }

    FeedEntry telemetry = entry(writer, first.position());
    assertThat(telemetry.seqCount()).isEqualTo(3);
    assertThat(telemetry.seq()).isEqualTo(T0 * 1000);
    FeedEntry attribute = entry(writer, attributes.position());
    assertThat(attribute.seq()).as("after the 3 reserved").isEqualTo(T0 * 1000 + 3);
    assertThat(attribute.seqCount()).isEqualTo(1);
    assertThat(entry(writer, next.position()).seq()).isEqualTo(T0 * 1000 + 4);
  }

  @Test
  void should_give_the_oldest_unsettled_sequence_number_as_the_pending_floor() {
    FeedWriter writer = writer(16);
    assertThat(writer.pendingSeqFloor()).as("nothing pending: the clock").isEqualTo(T0 * 1000);

    append(writer); // seq T0*1000
    clock.set(T0 + 1);
    append(writer); // seq (T0+1)*1000
    clock.set(T0 + 2);
    append(writer); // seq (T0+2)*1000

    assertThat(writer.pendingSeqFloor()).isEqualTo(T0 * 1000);
    writer.settle(3, true);
    assertThat(writer.pendingSeqFloor()).as("1 is still pending").isEqualTo(T0 * 1000);
    writer.settle(1, true);
    assertThat(writer.pendingSeqFloor()).isEqualTo((T0 + 1) * 1000);
    writer.settle(2, false);
    assertThat(writer.pendingSeqFloor())
        .as("nothing pending: what the next entry would get")
        .isEqualTo((T0 + 2) * 1000 + 1);

    clock.set(T0 - 1_000);
    assertThat(writer.pendingSeqFloor())
        .as("never below a number already given, however far the clock went back")
        .isEqualTo((T0 + 2) * 1000 + 1);
    clock.set(T0 + 50);
    assertThat(writer.pendingSeqFloor()).isEqualTo((T0 + 50) * 1000);
  }
}
