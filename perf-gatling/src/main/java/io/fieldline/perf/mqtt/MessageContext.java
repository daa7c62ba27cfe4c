package io.fieldline.perf.mqtt;

/**
 * What a {@link PayloadFactory} may use to build a message.
 *
 * @param userId the Gatling user id
 * @param sequence number of this message on its connection (0, 1, 2, ...)
 * @param deviceTs the timestamp the device should put in the message, {@code baseTs + sequence}
 *     (see {@link AckLedger}): unique per connection, so stored rows can be matched exactly
 * @param username the connection's MQTT username (the device's access token)
 * @param clockMillis Gatling's clock (epoch ms) as the message is built, just before it is written:
 *     the clock Gatling also stamps received WebSocket frames with, so a payload carrying it can be
 *     timed end to end
 */
public record MessageContext(
    long userId, long sequence, long deviceTs, String username, long clockMillis) {

  /** A context for a payload that needs no username or clock (tests, fixed payloads). */
  public MessageContext(long userId, long sequence, long deviceTs) {
    this(userId, sequence, deviceTs, "", deviceTs);
  }
}
