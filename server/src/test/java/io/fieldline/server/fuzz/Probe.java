package io.fieldline.server.fuzz;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * One well-behaved MQTT 3.1.1 round trip on a fresh connection: CONNECT with a device's token →
 * CONNACK 0x00, PINGREQ → PINGRESP, DISCONNECT. Each new connection lands on the next event loop,
 * so a probe that does not come back in time points at a stuck loop. Stateless.
 */
final class Probe {

  private Probe() {}

  /**
   * Runs one round trip; returns how long it took.
   *
   * @param tls a context for the TLS listener, or null for the plain one
   * @throws AssertionError if the server does not answer as a healthy server does within {@code
   *     bound}
   */
  static Duration roundTrip(
      InetSocketAddress listener,
      @Nullable SSLContext tls,
      String clientId,
      String token,
      Duration bound) {
    long started = System.nanoTime();
    int timeout = (int) bound.toMillis();
    try (Socket tcp = new Socket()) {
      tcp.setSoTimeout(timeout);
      tcp.connect(listener, timeout);
      Socket socket =
          tls == null
              ? tcp
              : tls.getSocketFactory()
                  .createSocket(tcp, listener.getHostString(), listener.getPort(), true);
      OutputStream out = socket.getOutputStream();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      out.write(
          MqttWriter.packet(
              0x10,
              new MqttWriter()
                  .string("MQTT")
                  .u8(4)
                  .u8(0x82)
                  .u16(60)
                  .string(clientId)
                  .string(token)
                  .toByteArray()));
      out.flush();
      expect(in, 0x20, new byte[] {0, 0}, "CONNACK 0x00");
      out.write(FuzzedPackets.pingreq());
      out.flush();
      expect(in, 0xd0, new byte[0], "PINGRESP");
      out.write(new byte[] {(byte) 0xe0, 0});
      out.flush();
    } catch (IOException e) {
      throw new AssertionError(
          "probe " + clientId + " to " + listener + " failed after " + elapsed(started), e);
    }
    Duration took = elapsed(started);
    if (took.compareTo(bound) > 0) {
      throw new AssertionError("probe " + clientId + " to " + listener + " took " + took);
    }
    return took;
  }

  private static void expect(DataInputStream in, int firstByte, byte[] body, String what)
      throws IOException {
    int first = in.readUnsignedByte();
    int length = in.readUnsignedByte();
    byte[] got = new byte[length];
    in.readFully(got);
    if (first != firstByte || !java.util.Arrays.equals(got, body)) {
      throw new IOException(
          "expected "
              + what
              + ", got first byte 0x"
              + Integer.toHexString(first)
              + " and "
              + length
              + " bytes");
    }
  }

  private static Duration elapsed(long started) {
    return Duration.ofNanos(System.nanoTime() - started);
  }
}
