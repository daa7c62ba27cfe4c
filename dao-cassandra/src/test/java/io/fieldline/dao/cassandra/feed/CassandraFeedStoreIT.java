package io.fieldline.dao.cassandra.feed;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import io.fieldline.common.DeviceId;
import io.fieldline.common.feed.FeedCursor;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.feed.FeedLog;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.dao.cassandra.CassandraTestBase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The change feed's logs, entries, leases and cursors against the real Cassandra. One log of a
 * little over three blocks (4 partitions) is written once, through {@link FeedWriter}'s own
 * statements, with a few positions left unwritten as failed writes leave them.
 */
class CassandraFeedStoreIT extends CassandraTestBase {

  private static final long BLOCK = FeedWriter.BLOCK;
  private static final long T0 = 1_700_000_000_000L;

  /** Positions of the big log: blocks 0 to 3, the last one partly. */
  private static final long LAST = 3 * BLOCK + 500;

  /** Unwritten positions of the big log: one at each side of each block boundary, and a run. */
  private static final LongPredicate GAP =
      p ->
          p == 1
              || p == BLOCK - 1
              || p == 2 * BLOCK
              || p == 3 * BLOCK + 1
              || (p >= 6_000 && p < 6_100)
              || p == LAST - 1;

  private final AtomicLong clock = new AtomicLong(T0);
  private final DeviceId device = DeviceId.random();
  private CassandraFeedStore store;
  private UUID bigLog;

  /** The big log's entries as written, by position (null for a gap). */
  private final List<FeedEntry> written = new ArrayList<>();

  @BeforeAll
  void writeTheBigLog() {
    store = new CassandraFeedStore(session, keyspace, config.writeConsistency(), 3_600);
    FeedWriter writer = writer();
    bigLog = writer.logId();
    written.add(null);
    // One millisecond per entry, so that entry p has sequence number (T0 + p) * 1000.
    write(writer, LAST, GAP, p -> clock.set(T0 + p));
    for (long p = 1; p <= LAST; p++) {
      written.add(GAP.test(p) ? null : entryFromMemory(writer, p));
    }
  }

  private FeedWriter writer() {
    return new FeedWriter(
        session,
        keyspace,
        new FeedConfig(true, Duration.ofHours(1), 1 << 14, "node-it"),
        config.writeConsistency(),
        15_000,
        clock::get);
  }

  // Appends `count` entries and executes the statements of those not in `gaps`, in batches of one
  // partition each; settles every position (a gap as failed).
  private void write(FeedWriter writer, long count, LongPredicate gaps, LongConsumer before) {
    List<CompletableFuture<?>> inFlight = new ArrayList<>();
    BatchStatementBuilder batch = BatchStatement.builder(DefaultBatchType.UNLOGGED);
    long batchBlock = -1;
    for (long i = 1; i <= count; i++) {
      before.accept(i);
      FeedWriter.Appended row =
          i % 5 == 0
              ? writer.attributes(
                  device,
                  AttributeScope.SHARED_SCOPE,
                  List.of(KvEntry.of("a" + i, "v" + i)),
                  T0 + i)
              : writer.telemetry(
                  device,
                  List.of(
                      new TsKvEntry(T0 + i, KvEntry.of("t", (double) i)),
                      new TsKvEntry(T0 + i, KvEntry.of("n", i))));
      assertThat(row.position()).isEqualTo(i);
      if (gaps.test(i)) {
        continue;
      }
      long block = i / BLOCK;
      if (batch.getStatementsCount() >= 50 || (block != batchBlock && batchBlock >= 0)) {
        inFlight.add(session.executeAsync(batch.build()).toCompletableFuture());
        batch = BatchStatement.builder(DefaultBatchType.UNLOGGED);
      }
      batchBlock = block;
      BoundStatement statement = row.statement();
      batch.addStatement(statement);
      if (inFlight.size() >= 16) {
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
        inFlight.clear();
      }
    }
    if (batch.getStatementsCount() > 0) {
      inFlight.add(session.executeAsync(batch.build()).toCompletableFuture());
    }
    CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).join();
    for (long i = 1; i <= count; i++) {
      writer.settle(i, !gaps.test(i));
    }
    assertThat(writer.settledPosition()).isEqualTo(count);
  }

  private static FeedEntry entryFromMemory(FeedWriter writer, long position) {
    return writer.tail(position - 1, 1).entries().get(0);
  }

  private List<FeedEntry> expectedAfter(long after) {
    return written.stream().skip(after + 1).filter(e -> e != null).toList();
  }

  private List<FeedEntry> readAll(UUID log, long after, int page) {
    List<FeedEntry> all = new ArrayList<>();
    long from = after;
    while (true) {
      List<FeedEntry> read = await(store.read(log, from, page));
      assertThat(read.size()).isLessThanOrEqualTo(page);
      all.addAll(read);
      if (read.size() < page) {
        return all;
      }
      from = read.get(read.size() - 1).position();
    }
  }

  @Test
  void should_read_every_entry_in_position_order_across_blocks_when_paging() {
    assertThat(readAll(bigLog, 0, 1_000)).isEqualTo(expectedAfter(0));
    assertThat(readAll(bigLog, 0, 4_999)).isEqualTo(expectedAfter(0));
    assertThat(await(store.read(bigLog, 0, 100_000))).isEqualTo(expectedAfter(0));
  }

  @Test
  void should_start_at_the_next_block_when_after_is_the_last_position_of_a_block() {
    List<FeedEntry> read = await(store.read(bigLog, BLOCK - 1, 3));
    assertThat(read).extracting(FeedEntry::position).containsExactly(BLOCK, BLOCK + 1, BLOCK + 2);

    List<FeedEntry> overGap = await(store.read(bigLog, BLOCK - 2, 2));
    assertThat(overGap)
        .as("BLOCK - 1 was never written")
        .extracting(FeedEntry::position)
        .containsExactly(BLOCK, BLOCK + 1);

    List<FeedEntry> acrossTwo = await(store.read(bigLog, 2 * BLOCK - 3, 4));
    assertThat(acrossTwo)
        .as("2 * BLOCK was never written")
        .extracting(FeedEntry::position)
        .containsExactly(2 * BLOCK - 2, 2 * BLOCK - 1, 2 * BLOCK + 1, 2 * BLOCK + 2);
  }

  @Test
  void should_read_a_whole_block_without_tombstones_when_telemetry_rows_have_no_scope() {
    // A bound null scope in each telemetry row was a tombstone cell per message: a block read
    // then drew Cassandra's tombstone warning (over 3,000 of them in 4,096 rows).
    ResultSet rows =
        session.execute(
            "SELECT pos, kind, scope FROM " + keyspace + ".feed WHERE log = ? AND block = 0",
            bigLog);
    int telemetry = 0;
    for (Row row : rows) {
      if (row.getByte("kind") == FeedWriter.TELEMETRY) {
        telemetry++;
        assertThat(row.getString("scope")).isNull();
      }
    }
    assertThat(telemetry).isGreaterThan(3_000);
    assertThat(rows.getExecutionInfo().getWarnings()).isEmpty();
  }

  @Test
  void should_return_what_the_writer_wrote_when_entries_are_read_back() {
    List<FeedEntry> read = await(store.read(bigLog, 4, 2));

    assertThat(read).containsExactly(written.get(5), written.get(6));
    assertThat(read.get(0)).isInstanceOf(FeedEntry.Attributes.class);
    assertThat(read.get(1).seq()).isEqualTo((T0 + 6) * 1000);
  }

  @Test
  void should_stop_at_the_end_when_reading_past_the_last_entry() {
    assertThat(await(store.read(bigLog, LAST - 3, 10)))
        .extracting(FeedEntry::position)
        .containsExactly(LAST - 2, LAST);
    assertThat(await(store.read(bigLog, LAST, 10))).isEmpty();
    assertThat(await(store.read(bigLog, LAST + 10 * BLOCK, 10))).isEmpty();
    assertThat(await(store.read(bigLog, 0, 0))).isEmpty();
    assertThat(await(store.read(UUID.randomUUID(), 0, 10))).isEmpty();
  }

  @Test
  void should_read_past_a_block_of_only_failed_writes_when_the_writer_published_beyond_it() {
    // Block 1 entirely failed (a Cassandra outage of 4,096 writes), then block 2 and 3 written.
    FeedWriter writer = writer();
    UUID log = writer.logId();
    long count = 3 * BLOCK + 20;
    LongPredicate failed =
        p -> (p > 30 && p < 2 * BLOCK + 5) || (p > 2 * BLOCK + 40 && p < 3 * BLOCK);
    write(writer, count, failed, p -> clock.set(T0 + p));
    List<Long> expected = new ArrayList<>();
    for (long p = 1; p <= count; p++) {
      if (!failed.test(p)) {
        expected.add(p);
      }
    }

    assertThat(await(store.read(log, 0, 10_000)))
        .as("nothing published yet: the empty block is the end as far as the store knows")
        .extracting(FeedEntry::position)
        .containsExactlyElementsOf(expected.subList(0, 30));

    await(store.publish(log, writer.settledPosition(), false));

    assertThat(await(store.read(log, 0, 10_000)))
        .extracting(FeedEntry::position)
        .containsExactlyElementsOf(expected);
    assertThat(readAll(log, 0, 7))
        .extracting(FeedEntry::position)
        .containsExactlyElementsOf(expected);
    assertThat(await(store.read(log, 40, 3)))
        .as("a read starting inside the failed run")
        .extracting(FeedEntry::position)
        .containsExactly(2 * BLOCK + 5, 2 * BLOCK + 6, 2 * BLOCK + 7);
    assertThat(await(store.positionBefore(log, (T0 + 3 * BLOCK + 5) * 1000)))
        .isEqualTo(3 * BLOCK + 4);
    assertThat(await(store.positionBefore(log, Long.MAX_VALUE))).isEqualTo(count);
  }

  @Test
  void should_give_the_position_before_the_first_entry_when_seq_is_before_it() {
    // 1 was never written: the first entry is 2.
    assertThat(await(store.positionBefore(bigLog, 0))).isEqualTo(1);
    assertThat(await(store.positionBefore(bigLog, (T0 + 2) * 1000))).isEqualTo(1);
    assertReplaysFrom(0, 2);
    assertThat(await(store.positionBefore(UUID.randomUUID(), T0 * 1000))).isZero();
  }

  @Test
  void should_give_the_position_just_before_when_seq_is_an_entry_of_the_middle() {
    // Exactly at, just below and just above entries next to block boundaries and gaps.
    long[] at = {
      3, 1_000, BLOCK, BLOCK + 1, 2 * BLOCK - 1, 2 * BLOCK + 1, 3 * BLOCK, 3 * BLOCK + 2
    };
    for (long p : at) {
      long seq = written.get((int) p).seq();
      assertReplaysFrom(seq, p);
      assertReplaysFrom(seq - 1, p);
      assertReplaysFrom(seq + 1, nextWritten(p));
    }
    assertThat(await(store.positionBefore(bigLog, written.get(3_000).seq()))).isEqualTo(2_999);
    assertThat(await(store.positionBefore(bigLog, written.get((int) (3 * BLOCK)).seq())))
        .as("the first of block 3, after a written position")
        .isEqualTo(3 * BLOCK - 1);
    assertReplaysFrom((T0 + 6_050) * 1000, 6_100); // inside the run of unwritten positions
  }

  // positionBefore(seq) is below `first` (the first entry at or above seq), at or above the written
  // entry before it, and reading after it starts at `first`.
  private void assertReplaysFrom(long seq, long first) {
    long before = await(store.positionBefore(bigLog, seq));
    long previous = first - 1;
    while (previous > 0 && written.get((int) previous) == null) {
      previous--;
    }
    assertThat(before).as("before seq %d", seq).isBetween(previous, first - 1);
    assertThat(await(store.read(bigLog, before, 1)))
        .as("reading after %d", before)
        .extracting(FeedEntry::position)
        .containsExactly(first);
  }

  private long nextWritten(long p) {
    long next = p + 1;
    while (written.get((int) next) == null) {
      next++;
    }
    return next;
  }

  @Test
  void should_give_the_last_position_when_seq_is_after_the_last_entry() {
    assertThat(await(store.positionBefore(bigLog, (T0 + LAST) * 1000 + 1))).isEqualTo(LAST);
    assertThat(await(store.positionBefore(bigLog, Long.MAX_VALUE))).isEqualTo(LAST);
  }

  private FeedLog log(UUID id) {
    return await(store.logs()).stream().filter(l -> l.id().equals(id)).findFirst().orElse(null);
  }

  @Test
  void should_list_a_new_log_leased_to_its_writer() {
    long before = clock.get();
    FeedWriter writer = writer();

    FeedLog log = log(writer.logId());
    assertThat(log).isNotNull();
    assertThat(log.node()).isEqualTo("node-it");
    assertThat(log.owner()).isEqualTo(writer.processId());
    assertThat(log.leaseUntil()).isEqualTo(before + 15_000);
    assertThat(log.createdAt()).isEqualTo(before);
    assertThat(log.lastPosition()).isZero();
    assertThat(log.closed()).isFalse();

    await(store.publish(writer.logId(), 42, true));
    assertThat(log(writer.logId()).lastPosition()).isEqualTo(42);
    assertThat(log(writer.logId()).closed()).isTrue();
  }

  @Test
  void should_take_refuse_and_retake_a_lease_when_it_is_free_held_or_expired() {
    FeedWriter holder = writer();
    UUID logId = holder.logId();
    UUID a = UUID.randomUUID();
    UUID b = UUID.randomUUID();
    long now = clock.get();

    assertThat(await(store.lease(logId, a, now, now + 1_000)))
        .as("held by its writer until now + 15 s")
        .isFalse();
    await(store.release(logId, a));
    assertThat(log(logId).owner())
        .as("a release by a non-holder does nothing")
        .isEqualTo(holder.processId());
    await(store.release(logId, holder.processId()));
    assertThat(log(logId).owner()).isNull();

    assertThat(await(store.lease(logId, a, now, now + 1_000))).as("free").isTrue();
    assertThat(log(logId).owner()).isEqualTo(a);
    assertThat(log(logId).leaseUntil()).isEqualTo(now + 1_000);

    assertThat(await(store.lease(logId, b, now + 999, now + 5_000)))
        .as("held by a, unexpired")
        .isFalse();
    assertThat(await(store.lease(logId, b, now + 1_000, now + 5_000)))
        .as("held by a until exactly now")
        .isFalse();
    assertThat(await(store.lease(logId, a, now + 500, now + 2_000))).as("renewed").isTrue();
    assertThat(log(logId).leaseUntil()).isEqualTo(now + 2_000);

    assertThat(await(store.lease(logId, b, now + 2_001, now + 5_000))).as("expired").isTrue();
    assertThat(log(logId).owner()).isEqualTo(b);
    assertThat(await(store.lease(logId, a, now + 2_001, now + 5_000))).isFalse();

    assertThat(await(store.lease(UUID.randomUUID(), a, now, now + 1_000)))
        .as("no such log")
        .isFalse();
  }

  @Test
  void should_give_a_free_lease_to_exactly_one_when_two_take_it_at_once() {
    for (int round = 0; round < 5; round++) {
      FeedWriter holder = writer();
      UUID logId = holder.logId();
      await(store.release(logId, holder.processId()));
      UUID a = UUID.randomUUID();
      UUID b = UUID.randomUUID();
      long now = clock.get();

      CompletableFuture<Boolean> first =
          store.lease(logId, a, now, now + 10_000).toCompletableFuture();
      CompletableFuture<Boolean> second =
          store.lease(logId, b, now, now + 10_000).toCompletableFuture();

      boolean aWon = await(first);
      boolean bWon = await(second);
      assertThat(aWon ^ bWon).as("round %d: a %s, b %s", round, aWon, bWon).isTrue();
      assertThat(log(logId).owner()).isEqualTo(aWon ? a : b);
    }
  }

  @Test
  void should_give_an_expired_lease_to_exactly_one_when_two_take_it_at_once() {
    for (int round = 0; round < 5; round++) {
      UUID logId = writer().logId();
      long expired = clock.get() + 15_001;
      UUID a = UUID.randomUUID();
      UUID b = UUID.randomUUID();

      CompletableFuture<Boolean> first =
          store.lease(logId, a, expired, expired + 10_000).toCompletableFuture();
      CompletableFuture<Boolean> second =
          store.lease(logId, b, expired, expired + 10_000).toCompletableFuture();

      boolean aWon = await(first);
      boolean bWon = await(second);
      assertThat(aWon ^ bWon).as("round %d: a %s, b %s", round, aWon, bWon).isTrue();
    }
  }

  @Test
  void should_hide_a_retired_log_until_retired_logs_are_reopened() {
    UUID kept = writer().logId();
    FeedWriter retiredWriter = writer();
    UUID retired = retiredWriter.logId();

    await(store.retire(retired));

    assertThat(await(store.logs())).extracting(FeedLog::id).contains(kept).doesNotContain(retired);

    await(store.reopenRetired());

    assertThat(await(store.logs())).extracting(FeedLog::id).contains(kept, retired);
    assertThat(log(retired).owner())
        .as("reopening keeps the row as it was")
        .isEqualTo(retiredWriter.processId());
  }

  @Test
  void should_read_back_saved_cursors_by_log_until_they_are_deleted() {
    UUID sink = UUID.randomUUID();
    UUID other = UUID.randomUUID();
    UUID log1 = UUID.randomUUID();
    UUID log2 = UUID.randomUUID();
    FeedCursor c1 = new FeedCursor(sink, log1, 10, 1_000, 111, 0);
    FeedCursor c2 = new FeedCursor(sink, log2, 20, Long.MAX_VALUE, 112, 3);
    FeedCursor o1 = new FeedCursor(other, log1, 5, 500, 113, 1);

    await(store.saveCursors(List.of()));
    assertThat(await(store.cursors(sink))).isEmpty();
    await(store.saveCursors(List.of(c1, c2)));
    await(store.saveCursors(List.of(o1)));

    assertThat(await(store.cursors(sink))).isEqualTo(Map.of(log1, c1, log2, c2));

    FeedCursor moved = new FeedCursor(sink, log1, 15, 1_500, 120, 0);
    await(store.saveCursors(List.of(moved)));
    assertThat(await(store.cursors(sink))).isEqualTo(Map.of(log1, moved, log2, c2));

    await(store.deleteCursors(sink));
    assertThat(await(store.cursors(sink))).isEmpty();
    assertThat(await(store.cursors(other))).isEqualTo(Map.of(log1, o1));
  }
}
