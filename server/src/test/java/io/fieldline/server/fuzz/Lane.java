package io.fieldline.server.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.io.ByteArrayOutputStream;

/**
 * One connection of a fuzz execution, as the fuzz data chooses it: which listener, which protocol
 * version, how it connects, the packets after CONNECT and how the bytes are cut into writes. Every
 * lane ends with a PINGREQ, so that a server that read all of it answers. Immutable.
 *
 * @param listener where the lane connects
 * @param version the protocol version its packets are built for
 * @param bytes everything the lane sends, CONNECT included
 * @param fuzzedPackets the packets built from fuzz data (a fuzzed CONNECT included; a well-formed
 *     CONNECT and the closing PINGREQ are not)
 * @param packets every packet in {@code bytes}
 * @param chunk bytes per write, 0 for one write
 * @param pingresps the PINGRESPs a server that read every packet owes
 * @param framed whether every length in the lane agrees with what follows it (see {@link
 *     FuzzedPackets#framed()})
 */
record Lane(
    Listener listener,
    Version version,
    byte[] bytes,
    int fuzzedPackets,
    int packets,
    int chunk,
    int pingresps,
    boolean framed) {

  /** Where a lane connects. */
  enum Listener {
    PLAIN,
    TLS,
    /** MQTT bytes in clear text to the TLS port. */
    CLEAR_TEXT_ON_TLS
  }

  /**
   * Reads the next lane from fuzz data.
   *
   * @param clientId the client id of a well-formed CONNECT
   * @param token a real device's access token, so that the packets after CONNECT reach a session
   * @param maxPackets the most packets after CONNECT
   */
  static Lane read(FuzzedDataProvider data, String clientId, String token, int maxPackets) {
    int where = data.consumeInt(0, 15);
    Listener listener =
        where < 10 ? Listener.PLAIN : where < 15 ? Listener.TLS : Listener.CLEAR_TEXT_ON_TLS;
    int which = data.consumeInt(0, 7);
    Version version =
        which < 4 ? Version.MQTT_3_1_1 : which < 7 ? Version.MQTT_5 : Version.MQTT_3_1;
    // 0-11 a device's CONNECT, 12-14 a CONNECT of fuzzed fields, 15 no CONNECT at all.
    int connectShape = data.consumeInt(0, 15);
    int chunk = data.consumeInt(0, 7) == 7 ? 1 + data.consumeInt(0, 63) : 0;
    int count = data.consumeInt(1, maxPackets);

    FuzzedPackets packets = new FuzzedPackets(data, version);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int fuzzed = 0;
    int written = 0;
    if (connectShape < 12) {
      out.writeBytes(packets.connect(clientId, token));
      written++;
    } else if (connectShape < 15) {
      out.writeBytes(packets.fuzzedConnect(token));
      fuzzed++;
      written++;
    }
    for (int i = 0; i < count; i++) {
      out.writeBytes(packets.next());
      fuzzed++;
      written++;
    }
    out.writeBytes(FuzzedPackets.pingreq());
    written++;
    return new Lane(
        listener,
        version,
        out.toByteArray(),
        fuzzed,
        written,
        chunk,
        packets.pingreqs() + 1,
        packets.framed() && listener != Listener.CLEAR_TEXT_ON_TLS);
  }
}
