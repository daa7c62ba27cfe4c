package io.fieldline.common.feed;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * What one node reports about one sink, saved every few seconds and summed over the nodes for the
 * sink's status.
 *
 * @param sinkId the sink
 * @param node the reporting node's id
 * @param state {@code RUNNING}, {@code RETRYING}, {@code PAUSED}, {@code ERROR}
 * @param delivered records delivered by this node since the sink was created (or replayed)
 * @param lagRecords entries settled in the feed and not yet delivered by this node
 * @param oldestUndeliveredAt epoch milliseconds of the oldest of them, 0 when there is none
 * @param lastError the last delivery error, if any
 * @param lastErrorAt epoch milliseconds of it, 0 when there is none
 * @param updatedAt epoch milliseconds of this report
 */
public record SinkNodeStatus(
    UUID sinkId,
    String node,
    String state,
    long delivered,
    long lagRecords,
    long oldestUndeliveredAt,
    @Nullable String lastError,
    long lastErrorAt,
    long updatedAt) {}
