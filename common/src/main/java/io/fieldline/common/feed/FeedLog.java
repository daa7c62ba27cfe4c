package io.fieldline.common.feed;

import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One log of the change feed: the entries one server process wrote, from its start to its end.
 *
 * @param id the log's id, new at every process start
 * @param node the id of the node that wrote it
 * @param createdAt epoch milliseconds at which it was opened
 * @param owner who delivers it now: the writer while it runs, else a process that adopted it; null
 *     when nobody holds it
 * @param leaseUntil epoch milliseconds until which {@code owner}'s lease runs
 * @param lastPosition the highest position written, as last published by the writer (a lower bound
 *     while the writer runs)
 * @param closed whether the writer closed it (no position above {@code lastPosition} exists)
 */
public record FeedLog(
    UUID id,
    String node,
    long createdAt,
    @Nullable UUID owner,
    long leaseUntil,
    long lastPosition,
    boolean closed) {}
