package io.fieldline.transport.mqtt.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.MqttSessionHandler;
import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * One server-side connection in an {@link EmbeddedChannel} with the production pipeline, and the
 * client's side of the wire: packets are encoded with Netty's encoder (or given as raw bytes) and
 * the server's output is decoded with a separate decoder. The embedded event loop runs only when
 * told: {@link #send} and {@link #received} run pending tasks, as the real loop would.
 */
public final class SessionClient {

  public static final String TELEMETRY = "v1/devices/me/telemetry";

  public final MqttSessionHandler handler;
  public final EmbeddedChannel channel;
  private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
  private final EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder());

  SessionClient(SessionFixture fixture) {
    MqttSessionHandler session = new MqttSessionHandler(fixture.context);
    this.handler = session;
    this.channel =
        new EmbeddedChannel(
            new ChannelInitializer<Channel>() {
              @Override
              protected void initChannel(Channel ch) {
                MqttPipeline.addStages(ch.pipeline(), fixture.config, session);
              }
            });
    channel.freezeTime();
  }

  // ---- client → server

  /**
   * Encodes the packets and delivers them as one read, like a client pipelining them. An MQTT 5
   * CONNECT also switches the test's decoder to MQTT 5, as it switches the server's.
   */
  public void send(MqttMessage... messages) {
    List<ByteBuf> encoded = new ArrayList<>();
    for (MqttMessage message : messages) {
      assertThat(encoder.writeOutbound(message)).isTrue();
      ByteBuf buf;
      while ((buf = encoder.readOutbound()) != null) {
        if (message instanceof MqttConnectMessage connect
            && connect.variableHeader().version() == MqttVersion.MQTT_5.protocolLevel()) {
          // Netty's decoder learns the protocol version from the CONNECT it decodes.
          decoder.writeInbound(buf.retainedDuplicate());
          ReferenceCountUtil.release(decoder.readInbound());
        }
        encoded.add(buf);
      }
    }
    channel.writeInbound(Unpooled.wrappedBuffer(encoded.toArray(new ByteBuf[0])));
  }

  public void sendBytes(int... bytes) {
    byte[] raw = new byte[bytes.length];
    for (int i = 0; i < bytes.length; i++) {
      raw[i] = (byte) bytes[i];
    }
    channel.writeInbound(Unpooled.wrappedBuffer(raw));
  }

  /** CONNECT (clean session, keep-alive 60 s) and the CONNACK it got. */
  public String connect(String token) {
    send(connectMessage(token, true, 60));
    return String.join(", ", received());
  }

  public static MqttConnectMessage connectMessage(
      String token, boolean cleanSession, int keepAlive) {
    return MqttMessageBuilders.connect()
        .protocolVersion(MqttVersion.MQTT_3_1_1)
        .clientId("client-1")
        .cleanSession(cleanSession)
        .keepAlive(keepAlive)
        .hasUser(true)
        .username(token)
        .build();
  }

  public static MqttPublishMessage publish(
      String topic, MqttQoS qos, int packetId, String payload) {
    return MqttMessageBuilders.publish()
        .topicName(topic)
        .qos(qos)
        .messageId(packetId)
        .retained(false)
        .payload(Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8))
        .build();
  }

  public static MqttPublishMessage telemetry(int packetId) {
    return publish(
        TELEMETRY, MqttQoS.AT_LEAST_ONCE, packetId, "{\"temperature\":" + packetId + "}");
  }

  /** A PUBACK from the client for one of the server's QoS 1 messages. */
  public static MqttMessage puback(int packetId) {
    return new MqttMessage(
        new MqttFixedHeader(MqttMessageType.PUBACK, false, MqttQoS.AT_MOST_ONCE, false, 2),
        MqttMessageIdVariableHeader.from(packetId));
  }

  /** SUBSCRIBE to {@code filter} at {@code qos}. */
  public static MqttMessage subscribe(int packetId, String filter, MqttQoS qos) {
    return MqttMessageBuilders.subscribe().messageId(packetId).addSubscription(qos, filter).build();
  }

  public static MqttMessage pubrel(int packetId) {
    return new MqttMessage(
        new MqttFixedHeader(MqttMessageType.PUBREL, false, MqttQoS.AT_LEAST_ONCE, false, 2),
        MqttMessageIdVariableHeader.from(packetId));
  }

  // ---- server → client

  /** Runs the event loop's pending work, as the real loop would between I/O events. */
  public void runTasks() {
    channel.runPendingTasks();
  }

  public void advanceTime(long millis) {
    channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    channel.runPendingTasks();
  }

  /** Raw bytes the server flushed since the last call. */
  public byte[] receivedBytes() {
    runTasks();
    List<ByteBuf> out = new ArrayList<>();
    ByteBuf buf;
    while ((buf = channel.readOutbound()) != null) {
      out.add(buf);
    }
    ByteBuf all = Unpooled.wrappedBuffer(out.toArray(new ByteBuf[0]));
    try {
      return ByteBufUtil.getBytes(all);
    } finally {
      all.release();
    }
  }

  /** Packets the server flushed since the last call, each described as a short string. */
  public List<String> received() {
    runTasks();
    ByteBuf buf;
    while ((buf = channel.readOutbound()) != null) {
      decoder.writeInbound(buf);
    }
    List<String> packets = new ArrayList<>();
    MqttMessage message;
    while ((message = decoder.readInbound()) != null) {
      try {
        assertThat(message.decoderResult().isSuccess())
            .as("server sent a packet that does not decode: %s", message.decoderResult())
            .isTrue();
        packets.add(describe(message));
      } finally {
        ReferenceCountUtil.release(message);
      }
    }
    return packets;
  }

  private static String describe(MqttMessage message) {
    MqttMessageType type = message.fixedHeader().messageType();
    return switch (type) {
      case CONNACK -> {
        MqttConnAckMessage connAck = (MqttConnAckMessage) message;
        yield String.format(
            Locale.ROOT,
            "CONNACK 0x%02x%s",
            connAck.variableHeader().connectReturnCode().byteValue(),
            connAck.variableHeader().isSessionPresent() ? " session-present" : "");
      }
      case PUBACK, PUBREC, PUBREL, PUBCOMP, UNSUBACK ->
          type + " " + ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
      case SUBACK -> {
        MqttSubAckMessage subAck = (MqttSubAckMessage) message;
        yield "SUBACK "
            + subAck.variableHeader().messageId()
            + " "
            + subAck.payload().grantedQoSLevels();
      }
      case PUBLISH -> {
        MqttPublishMessage publish = (MqttPublishMessage) message;
        // QoS 1 shows its packet id (and DUP): "PUBLISH#3 dup topic payload".
        String qos1 =
            publish.fixedHeader().qosLevel() == MqttQoS.AT_MOST_ONCE
                ? ""
                : "#"
                    + publish.variableHeader().packetId()
                    + (publish.fixedHeader().isDup() ? " dup" : "");
        yield "PUBLISH"
            + qos1
            + " "
            + publish.variableHeader().topicName()
            + " "
            + publish.payload().toString(StandardCharsets.UTF_8);
      }
      default -> type.toString();
    };
  }

  public boolean isOpen() {
    runTasks();
    return channel.isActive();
  }

  public boolean isReading() {
    return channel.config().isAutoRead();
  }

  public void close() {
    channel.finishAndReleaseAll();
    encoder.finishAndReleaseAll();
    decoder.finishAndReleaseAll();
  }
}
