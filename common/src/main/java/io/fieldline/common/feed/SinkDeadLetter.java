package io.fieldline.common.feed;

import java.util.UUID;

/**
 * A batch a sink's receiver refused for good (a webhook's 4xx other than 429): kept for an operator
 * to read, while delivery goes on.
 *
 * @param sinkId the sink
 * @param id a time-based id, newest first in listings
 * @param createdTime epoch milliseconds
 * @param records how many records the batch held
 * @param status the receiver's answer (an HTTP status), 0 when there was none
 * @param error what was wrong, in words
 * @param body the batch exactly as sent (a JSON array), cut to the configured maximum
 */
public record SinkDeadLetter(
    UUID sinkId, UUID id, long createdTime, int records, int status, String error, String body) {}
