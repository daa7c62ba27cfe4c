package io.fieldline.transport.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.transport.mqtt.testkit.RunningServer;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SocketClient;
import io.fieldline.transport.mqtt.testkit.SocketClient.End;
import io.fieldline.transport.mqtt.testkit.SocketClient.Received;
import io.netty.handler.codec.mqtt.MqttMessageType;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How the server ends a connection on a real socket: a client that went on sending while the server
 * had stopped reading it still gets every acknowledgement written before the end, then
 * end-of-stream — never a reset, which would let the client lose them and send acknowledged
 * messages again.
 */
class ConnectionEndTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  private RunningServer running;

  @AfterEach
  void stop() {
    if (running != null) {
      running.close();
    }
  }

  /** Connected; message 1 waits to be stored, message 2 failed, message 3 sent and unread. */
  private SocketClient failingWithUnreadBytes() throws Exception {
    running = new RunningServer();
    running.device("end-token");
    SocketClient client = new SocketClient(running.port, 0);
    client.send(SessionClient.connectMessage("end-token", true, 60));
    Received connAck = client.read(WAIT);
    assertThat(connAck).isNotNull();
    assertThat(connAck.type()).isEqualTo(MqttMessageType.CONNACK);

    client.send(SessionClient.telemetry(1), SessionClient.telemetry(2));
    await().atMost(WAIT).until(() -> running.gateway.submissions().size() == 2);
    running.gateway.submission(1).fail();
    // Counted on the event loop right where the server stops reading this socket.
    await().atMost(WAIT).until(() -> running.count("fieldline.mqtt.write.failures") == 1);
    client.send(SessionClient.telemetry(3));
    return client;
  }

  @Test
  void should_deliver_the_acknowledgements_before_a_failed_write_and_end_without_a_reset()
      throws Exception {
    try (SocketClient client = failingWithUnreadBytes()) {
      running.gateway.submission(0).store();

      Received puback = client.read(WAIT);
      assertThat(puback).isNotNull();
      assertThat(puback.type()).isEqualTo(MqttMessageType.PUBACK);
      assertThat(puback.packetId()).isEqualTo(1);
      client.send(SessionClient.telemetry(4)); // a client's sender does not know yet
      assertThat(client.readToEnd(WAIT))
          .as("end-of-stream, although the server never read messages 3 and 4")
          .isEqualTo(End.CLOSED);
    }
    await()
        .atMost(WAIT)
        .untilAsserted(() -> assertThat(running.gauge("fieldline.mqtt.connections")).isZero());
    assertThat(running.gateway.submissions()).as("nothing read after the failure").hasSize(2);
  }

  @Test
  void should_close_a_connection_whose_client_never_closes_its_side() throws Exception {
    try (SocketClient client = failingWithUnreadBytes()) {
      running.gateway.submission(0).store();

      assertThat(client.readToEnd(WAIT)).isEqualTo(End.CLOSED);
      // The client keeps its socket open: the server lets it go after its linger all the same.
      await()
          .atMost(WAIT)
          .untilAsserted(() -> assertThat(running.gauge("fieldline.mqtt.connections")).isZero());
    }
  }
}
