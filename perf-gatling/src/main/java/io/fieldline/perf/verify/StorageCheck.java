package io.fieldline.perf.verify;

/**
 * Outcome of comparing a run's acknowledgement ledger with the rows in {@code ts_kv}.
 *
 * @param connections ledger entries checked
 * @param sent messages sent
 * @param acked messages acknowledged (PUBACK received)
 * @param storedAcked acknowledged messages with all their rows stored
 * @param missing acknowledged messages with no row stored: an acknowledged message was lost
 * @param partial acknowledged messages with some but not all of their rows stored
 * @param storedNotAcked messages stored (at least one row) that were not acknowledged: allowed
 *     (written, but the PUBACK timed out or the connection closed first)
 * @param rows rows found in the checked ranges
 * @param keys rows per message
 * @param unknownTokens ledger entries whose token is not in the feeder (not checked)
 */
public record StorageCheck(
    long connections,
    long sent,
    long acked,
    long storedAcked,
    long missing,
    long partial,
    long storedNotAcked,
    long rows,
    int keys,
    long unknownTokens) {}
