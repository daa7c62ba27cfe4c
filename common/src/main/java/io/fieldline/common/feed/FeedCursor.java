package io.fieldline.common.feed;

import java.util.UUID;

/**
 * How far one sink has delivered one log.
 *
 * @param sinkId the sink
 * @param logId the log
 * @param position every entry of the log at or below it is delivered (or filtered out)
 * @param watermark the sequence number (microseconds) below which the log has nothing left to
 *     deliver to this sink, as published by the process delivering it; {@link Long#MAX_VALUE} once
 *     the log is closed and delivered to its end
 * @param updatedAt epoch milliseconds of the last save
 * @param generation the sink's replay generation it belongs to
 */
public record FeedCursor(
    UUID sinkId, UUID logId, long position, long watermark, long updatedAt, int generation) {}
