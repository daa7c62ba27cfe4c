package io.fieldline.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * A live-server test in which a misbehaving client speaks raw MQTT ({@link RawMqtt}) over sockets
 * the test opens, while a well-behaved {@link Bystander} keeps publishing: after every test the raw
 * sockets are closed and the bystander must still be served, each acknowledged message stored.
 */
abstract class BadClientTestBase extends ServerTestBase {

  private final List<Socket> sockets = new ArrayList<>();
  protected Bystander bystander;

  @BeforeEach
  void connectBystander() {
    if (bystander == null) {
      bystander =
          new Bystander(this, getClass().getSimpleName().toLowerCase(Locale.ROOT) + "-bystander");
    }
    bystander.connect();
  }

  @AfterEach
  void bystanderStillServed() throws IOException {
    for (Socket socket : sockets) {
      socket.close();
    }
    sockets.clear();
    bystander.publishesAndAllStored();
    bystander.disconnect();
  }

  /** A raw socket to the MQTT port (30 s read timeout), closed after the test. */
  protected Socket socket() throws IOException {
    return socket(0);
  }

  /**
   * Like {@link #socket()}, with a receive buffer of {@code receiveBuffer} bytes (0 = the system's)
   * set before connecting, so that the TCP window stays that small.
   */
  protected Socket socket(int receiveBuffer) throws IOException {
    Socket socket = new Socket();
    sockets.add(socket);
    if (receiveBuffer > 0) {
      socket.setReceiveBufferSize(receiveBuffer);
    }
    socket.setSoTimeout(30_000);
    socket.connect(new InetSocketAddress("127.0.0.1", mqttPort()));
    return socket;
  }
}
