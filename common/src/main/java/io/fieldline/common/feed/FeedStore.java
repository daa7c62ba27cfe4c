package io.fieldline.common.feed;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

/**
 * The durable side of the change feed: its logs, their entries and leases, and every sink's
 * cursors. Stages fail with {@link io.fieldline.common.StoreException} when storage does.
 */
public interface FeedStore {

  /** Every log still within retention. */
  CompletionStage<List<FeedLog>> logs();

  /**
   * Takes or renews the lease of a log for {@code owner} until {@code leaseUntil}: succeeds when
   * nobody holds it, the holder is {@code owner}, or the holder's lease ran out before {@code now}.
   *
   * @return whether {@code owner} holds the lease now
   */
  CompletionStage<Boolean> lease(UUID logId, UUID owner, long now, long leaseUntil);

  /** Publishes how far a log is written (for lag), and whether its writer closed it. */
  CompletionStage<Void> publish(UUID logId, long lastPosition, boolean closed);

  /** Gives a lease up, if {@code owner} holds it. */
  CompletionStage<Void> release(UUID logId, UUID owner);

  /** Forgets a log that every sink has delivered to its end (its entries expire by TTL). */
  CompletionStage<Void> retire(UUID logId);

  /** Brings every retired log back (for a replay), so that it is delivered again. */
  CompletionStage<Void> reopenRetired();

  /**
   * Reads entries of a log with {@code position > after}, in position order, at most {@code limit}
   * of them; fewer (possibly none) at its current end.
   */
  CompletionStage<List<FeedEntry>> read(UUID logId, long after, int limit);

  /**
   * The position just before the first entry whose sequence number is at or above {@code seq}, so
   * that reading after it replays from that time; the log's last position if there is none.
   */
  CompletionStage<Long> positionBefore(UUID logId, long seq);

  /** The cursors of one sink, by log. */
  CompletionStage<Map<UUID, FeedCursor>> cursors(UUID sinkId);

  /** Saves cursors (one sink, any logs), last write wins. */
  CompletionStage<Void> saveCursors(List<FeedCursor> cursors);

  /** Removes every cursor of a sink. */
  CompletionStage<Void> deleteCursors(UUID sinkId);
}
