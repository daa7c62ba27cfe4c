package io.fieldline.common.feed;

import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * This process's own log while it is written: the positions that are durable, and the newest
 * entries still held in memory so that a sink keeping up never reads them back from storage.
 */
public interface LocalFeed {

  /** The id of the log this process writes now; the other methods are about it. */
  UUID logId();

  /** The id this process holds leases under (the same for every log it writes). */
  UUID processId();

  /**
   * Starts a new log, because another process took this one's (it was frozen longer than its
   * lease): what is written from now on goes to the new log; the old one is delivered by whoever
   * holds it.
   */
  void rotate();

  /**
   * The exporter renewed the lease of log {@code logId} until {@code until} (epoch milliseconds, as
   * it computed it before asking). From then on a write of that log that completes after {@code
   * until}, less a margin for the clocks of the nodes, is not acknowledged: another process may
   * have adopted the log and read it to its end (this one was frozen or cut off from storage longer
   * than the lease). Such a write fails, the device sends the message again, and it goes to a new
   * log. Until the first call nothing is fenced (the log's own first lease covers the start).
   */
  void leaseHeld(UUID logId, long until);

  /**
   * Every position at or below it is settled: written (acknowledged) or failed (never acknowledged,
   * never delivered from memory).
   */
  long settledPosition();

  /**
   * The smallest sequence number any entry not yet settled can have: a sink that delivered every
   * settled entry has nothing older than it left in this log.
   */
  long pendingSeqFloor();

  /**
   * Settled, written entries of log {@code logId} with {@code position > after}, at most {@code
   * limit}, from memory; null when that is not the current log or memory no longer reaches back to
   * {@code after} (read the store instead).
   */
  @Nullable Tail tail(UUID logId, long after, int limit);

  /** Called (on a storage thread; keep it short) whenever the settled position advances. */
  void onSettled(Runnable listener);

  /**
   * Entries from memory.
   *
   * @param entries the written entries found, in position order
   * @param through every position up to it was looked at (failed writes are skipped): the cursor
   *     may move to it once the entries are delivered
   */
  record Tail(List<FeedEntry> entries, long through) {}
}
