package io.fieldline.transport.mqtt.session;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.zip.CRC32C;

/**
 * The receive time a gateway session gave each of its unacknowledged QoS 1/2 messages, so that a
 * retransmission stores no second copy.
 *
 * <p>Rows are keyed by (device, key, ts), and most gateway messages carry values without {@code
 * ts}: they are stamped with the receive time. A message that was not acknowledged (a child's write
 * failed) is sent again by the gateway with the DUP flag and the same packet id (MQTT 3.1.1 §4.4,
 * MQTT 5 §4.4) — always on a new connection, since the server closes the connection after a failed
 * write. Stamped anew, its values would be stored a second time at a later time. So the stamp is
 * remembered per packet id, with a CRC-32C and the length of the payload, until the message is
 * acknowledged; a DUP PUBLISH with the same packet id and the same payload gets the remembered
 * stamp again. A PUBLISH without DUP is always new and always stamped anew.
 *
 * <p>The memory lives exactly as long as the MQTT session ({@link SessionState}): a kept session
 * (CleanSession = 0, MQTT 5 Session Expiry Interval &gt; 0) carries it to the connection the
 * retransmission arrives on, which is what MQTT promises a retransmission for. It does not help
 * when the session is not kept (a clean session whose client resends anyway), after a restart of
 * this node, or when the gateway reconnects to another node: such a retransmission is stamped anew
 * and its values without {@code ts} are stored twice, a second time at the later time. Values with
 * their own {@code ts} overwrite their rows whatever happens. At most {@code max} stamps are kept
 * per session (the oldest is forgotten beyond it): about 50 bytes each.
 *
 * <p>Thread-safe: the successive connections of one session may run on different event loops. Held
 * by the session's {@link SessionState#gatewayTimestamps(int)}.
 */
public final class GatewayTimestamps {

  /**
   * A stamp for one message.
   *
   * @param receivedAt the receive time to give its values without {@code ts}, epoch milliseconds
   * @param reused whether it is the stamp of an earlier copy of the message
   */
  public record Stamp(long receivedAt, boolean reused) {}

  private record Remembered(long receivedAt, int crc, int length) {}

  private final int max;
  // Packet id → stamp, oldest first. Guarded by this.
  private final LinkedHashMap<Integer, Remembered> unacknowledged = new LinkedHashMap<>();

  GatewayTimestamps(int max) {
    this.max = max;
  }

  /**
   * The stamp of a QoS 1/2 PUBLISH received at {@code now}: the remembered one for a DUP copy of a
   * message still unacknowledged, else {@code now} (then remembered).
   */
  public synchronized Stamp stamp(int packetId, boolean dup, byte[] payload, long now) {
    int crc = crc(payload);
    if (dup) {
      Remembered earlier = unacknowledged.get(packetId);
      if (earlier != null && earlier.crc == crc && earlier.length == payload.length) {
        return new Stamp(earlier.receivedAt, true);
      }
    }
    unacknowledged.remove(packetId); // re-inserted last: the newest
    unacknowledged.put(packetId, new Remembered(now, crc, payload.length));
    if (unacknowledged.size() > max) {
      Iterator<Integer> oldest = unacknowledged.keySet().iterator();
      oldest.next();
      oldest.remove();
    }
    return new Stamp(now, false);
  }

  /** The message {@code packetId} was acknowledged: it will not be sent again. */
  public synchronized void forget(int packetId) {
    unacknowledged.remove(packetId);
  }

  /** Stamps remembered now. */
  public synchronized int size() {
    return unacknowledged.size();
  }

  private static int crc(byte[] payload) {
    CRC32C crc = new CRC32C();
    crc.update(payload);
    return (int) crc.getValue();
  }
}
