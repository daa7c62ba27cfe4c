package io.fieldline.transport.mqtt.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * An MQTT 3.1.1 client on a real socket that does only what the test says: it never acknowledges or
 * reads on its own, so a test can hold PUBACKs back or leave the socket unread. Packets go through
 * Netty's encoder and come back through Netty's decoder; nothing else is implemented.
 */
public final class SocketClient implements AutoCloseable {

  /**
   * One packet from the server.
   *
   * @param packetId of a PUBLISH at QoS 1 or an acknowledgement, else 0
   * @param topic of a PUBLISH, else empty
   * @param payload of a PUBLISH, else empty
   * @param sessionPresent of a CONNACK, else false
   */
  public record Received(
      MqttMessageType type,
      int qos,
      boolean dup,
      int packetId,
      String topic,
      String payload,
      boolean sessionPresent) {

    /** A PUBLISH as it should arrive. */
    public static Received publish(
        int qos, boolean dup, int packetId, String topic, String payload) {
      return new Received(MqttMessageType.PUBLISH, qos, dup, packetId, topic, payload, false);
    }
  }

  private final Socket socket = new Socket();
  private final InputStream in;
  private final OutputStream out;
  private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
  private final EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder());

  /**
   * Connects to 127.0.0.1:{@code port}.
   *
   * @param receiveBuffer the socket's receive buffer in bytes (0: the system's): small, for a
   *     client whose unread bytes must soon hold the server back
   */
  public SocketClient(int port, int receiveBuffer) throws IOException {
    if (receiveBuffer > 0) {
      socket.setReceiveBufferSize(receiveBuffer);
    }
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  /** Encodes the packets and writes them in one go. */
  public void send(MqttMessage... messages) throws IOException {
    for (MqttMessage message : messages) {
      encoder.writeOutbound(message);
      ByteBuf encoded;
      while ((encoded = encoder.readOutbound()) != null) {
        try {
          out.write(ByteBufUtil.getBytes(encoded));
        } finally {
          encoded.release();
        }
      }
    }
    out.flush();
  }

  /** The next packet from the server, or null if none arrived within {@code timeout}. */
  public @Nullable Received read(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    byte[] buffer = new byte[8192];
    while (true) {
      MqttMessage message = decoder.readInbound();
      if (message != null) {
        return describe(message);
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return null;
      }
      socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
      int read;
      try {
        read = in.read(buffer);
      } catch (SocketTimeoutException e) {
        return null;
      }
      if (read < 0) {
        throw new IOException("the server closed the connection");
      }
      decoder.writeInbound(Unpooled.copiedBuffer(buffer, 0, read));
    }
  }

  /** How the server's side of the connection ended, as {@link #readToEnd} saw it. */
  public enum End {
    /** End-of-stream: everything the server sent was read. */
    CLOSED,
    /** The connection was reset. */
    RESET,
    /** Neither within the time given. */
    OPEN
  }

  /**
   * Reads until the server ends the connection or {@code timeout} passes; what is read meanwhile is
   * dropped (read packets first with {@link #read} to look at them).
   */
  public End readToEnd(Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    byte[] buffer = new byte[8192];
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return End.OPEN;
      }
      socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
      try {
        if (in.read(buffer) < 0) {
          return End.CLOSED;
        }
      } catch (SocketTimeoutException e) {
        return End.OPEN;
      } catch (SocketException e) {
        return End.RESET;
      }
    }
  }

  private static Received describe(MqttMessage message) {
    try {
      MqttMessageType type = message.fixedHeader().messageType();
      if (message instanceof MqttPublishMessage publish) {
        return Received.publish(
            publish.fixedHeader().qosLevel().value(),
            publish.fixedHeader().isDup(),
            publish.variableHeader().packetId(),
            publish.variableHeader().topicName(),
            publish.payload().toString(StandardCharsets.UTF_8));
      }
      int packetId =
          message.variableHeader() instanceof MqttMessageIdVariableHeader id ? id.messageId() : 0;
      boolean present =
          message instanceof MqttConnAckMessage connAck
              && connAck.variableHeader().isSessionPresent();
      return new Received(type, 0, false, packetId, "", "", present);
    } finally {
      ReferenceCountUtil.release(message);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
    encoder.finishAndReleaseAll();
    decoder.finishAndReleaseAll();
  }
}
