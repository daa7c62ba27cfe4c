package io.fieldline.transport.mqtt.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.port.SessionTakeover;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttSessionHandler;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.fieldline.transport.mqtt.session.PreAuthLimits;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.fieldline.transport.mqtt.testkit.FakeDeadLetterStore;
import io.fieldline.transport.mqtt.testkit.FakeDeviceInbox;
import io.fieldline.transport.mqtt.testkit.FakeTelemetryQueries;
import io.fieldline.transport.mqtt.testkit.TestConfigs;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageIdVariableHeader;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One server's shared parts for gateway session tests — the real {@link SessionContext} with an
 * {@link InMemoryRegistry}, the testkit's fake device gateway and dead-letter store, a session
 * registry and meters — and {@link Client}, one connection through the production pipeline in an
 * {@link EmbeddedChannel}. The embedded event loop runs only when told ({@link Client#received}).
 */
final class GatewayFixture {

  final MqttTransportConfig config;
  final InMemoryRegistry registry = new InMemoryRegistry();
  final FakeDeviceInbox gateway = new FakeDeviceInbox();
  final FakeDeadLetterStore deadLetters = new FakeDeadLetterStore();
  final FakeTelemetryQueries queries = new FakeTelemetryQueries();
  final LocalDeviceEvents events = new LocalDeviceEvents();
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final SessionContext context;

  GatewayFixture(String... overrides) {
    this.config = TestConfigs.mqtt(overrides);
    this.context =
        new SessionContext(
            config,
            registry,
            gateway,
            deadLetters,
            PayloadParser.defaults(),
            new SessionRegistry(),
            SessionTakeover.LOCAL_ONLY,
            new MqttMetrics(meters),
            new PreAuthLimits(config),
            events,
            queries,
            () -> false);
  }

  /** The count of a counter, 0 if it was never registered. */
  double count(String name, String... tags) {
    Counter counter = meters.find(name).tags(tags).counter();
    return counter == null ? 0 : counter.count();
  }

  Client open() {
    return new Client(this);
  }

  /** A QoS 1 PUBLISH with {@code payload}, DUP set when {@code dup}. */
  static MqttPublishMessage publish(String topic, int packetId, String payload, boolean dup) {
    return new MqttPublishMessage(
        new MqttFixedHeader(MqttMessageType.PUBLISH, dup, MqttQoS.AT_LEAST_ONCE, false, 0),
        new MqttPublishVariableHeader(topic, packetId),
        Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8));
  }

  static MqttPublishMessage publish(String topic, int packetId, String payload) {
    return publish(topic, packetId, payload, false);
  }

  /** SUBSCRIBE to {@code filters}, each at {@code qos}. */
  static MqttMessage subscribe(int packetId, MqttQoS qos, String... filters) {
    MqttMessageBuilders.SubscribeBuilder subscribe =
        MqttMessageBuilders.subscribe().messageId(packetId);
    for (String filter : filters) {
      subscribe.addSubscription(qos, filter);
    }
    return subscribe.build();
  }

  /** A PUBACK from the client for the server's QoS 1 PUBLISH {@code packetId}. */
  static MqttMessage puback(int packetId) {
    return new MqttMessage(
        new MqttFixedHeader(MqttMessageType.PUBACK, false, MqttQoS.AT_MOST_ONCE, false, 2),
        MqttMessageIdVariableHeader.from(packetId));
  }

  /** One connection: the client's side of the wire, packets described as short strings. */
  static final class Client implements AutoCloseable {

    final EmbeddedChannel channel;
    private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
    private final EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder());

    private Client(GatewayFixture fixture) {
      MqttSessionHandler session = new MqttSessionHandler(fixture.context);
      this.channel =
          new EmbeddedChannel(
              new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                  MqttPipeline.addStages(ch.pipeline(), fixture.config, session);
                }
              });
    }

    /** CONNECT (MQTT 3.1.1) with {@code token}; the CONNACK as "CONNACK 0x00[ session-present]". */
    String connect(String token, boolean cleanSession) {
      send(
          MqttMessageBuilders.connect()
              .protocolVersion(MqttVersion.MQTT_3_1_1)
              .clientId("gateway-client")
              .cleanSession(cleanSession)
              .keepAlive(60)
              .hasUser(true)
              .username(token)
              .build());
      return String.join(", ", received());
    }

    void send(MqttMessage message) {
      assertThat(encoder.writeOutbound(message)).isTrue();
      ByteBuf buf;
      while ((buf = encoder.readOutbound()) != null) {
        channel.writeInbound(buf);
      }
    }

    /** Packets the server flushed since the last call (after running the event loop's tasks). */
    List<String> received() {
      channel.runPendingTasks();
      ByteBuf buf;
      while ((buf = channel.readOutbound()) != null) {
        decoder.writeInbound(buf);
      }
      List<String> packets = new ArrayList<>();
      MqttMessage message;
      while ((message = decoder.readInbound()) != null) {
        try {
          packets.add(describe(message));
        } finally {
          ReferenceCountUtil.release(message);
        }
      }
      return packets;
    }

    /** Runs the event loop's pending tasks, as the real loop would between I/O events. */
    void runTasks() {
      channel.runPendingTasks();
    }

    /** Whether the server reads the socket (not paused by backpressure). */
    boolean isReading() {
      return channel.config().isAutoRead();
    }

    boolean isOpen() {
      channel.runPendingTasks();
      return channel.isActive();
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
        case PUBACK ->
            "PUBACK " + ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
        case SUBACK -> {
          MqttSubAckMessage subAck = (MqttSubAckMessage) message;
          yield "SUBACK "
              + subAck.variableHeader().messageId()
              + " "
              + subAck.payload().grantedQoSLevels();
        }
        case PUBLISH -> {
          // "PUBLISH topic payload" at QoS 0, "PUBLISH#<packet id> topic payload" at QoS 1.
          MqttPublishMessage publish = (MqttPublishMessage) message;
          yield "PUBLISH"
              + (publish.fixedHeader().qosLevel() == MqttQoS.AT_MOST_ONCE
                  ? ""
                  : "#" + publish.variableHeader().packetId())
              + " "
              + publish.variableHeader().topicName()
              + " "
              + publish.payload().toString(StandardCharsets.UTF_8);
        }
        default -> type.toString();
      };
    }

    @Override
    public void close() {
      channel.finishAndReleaseAll();
      encoder.finishAndReleaseAll();
      decoder.finishAndReleaseAll();
    }
  }
}
