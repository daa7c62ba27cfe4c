package io.fieldline.export;

import org.jspecify.annotations.Nullable;

/**
 * A sink's delivery, summed over the nodes.
 *
 * @param state {@code RUNNING} (delivering or caught up), {@code RETRYING} (the receiver fails;
 *     retried with backoff), {@code PAUSED}, {@code ERROR} (cannot be started: the message says
 *     why)
 * @param delivered records delivered since it was created or last replayed
 * @param lagRecords records stored and not yet delivered
 * @param lagMs age of the oldest of them in milliseconds, 0 when there is none
 * @param lastError the last delivery error, null when none was seen
 * @param lastErrorTime epoch milliseconds of it, 0 when none
 */
public record SinkStatus(
    String state,
    long delivered,
    long lagRecords,
    long lagMs,
    @Nullable String lastError,
    long lastErrorTime) {}
