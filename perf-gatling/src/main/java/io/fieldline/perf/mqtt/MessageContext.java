package io.fieldline.perf.mqtt;

/**
 * What a {@link PayloadFactory} may use to build a message.
 *
 * @param userId the Gatling user id
 * @param sequence number of this message on its connection (0, 1, 2, ...)
 * @param deviceTs the timestamp the device should put in the message, {@code baseTs + sequence}
 *     (see {@link AckLedger}): unique per connection, so stored rows can be matched exactly
 */
public record MessageContext(long userId, long sequence, long deviceTs) {}
