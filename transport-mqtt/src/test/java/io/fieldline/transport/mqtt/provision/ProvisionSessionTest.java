package io.fieldline.transport.mqtt.provision;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.credentials.DeviceCredentials;
import io.fieldline.common.events.LocalDeviceEvents;
import io.fieldline.common.provision.DeviceProvisioning;
import io.fieldline.common.provision.ProvisionResponse;
import io.fieldline.transport.common.firmware.FirmwareDelivery;
import io.fieldline.transport.common.payload.PayloadParser;
import io.fieldline.transport.mqtt.DeviceServices;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttSessionHandler;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.fieldline.transport.mqtt.session.PreAuthLimits;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.session.SessionRegistry;
import io.fieldline.transport.mqtt.testkit.FakeDeadLetterStore;
import io.fieldline.transport.mqtt.testkit.FakeDeviceInbox;
import io.fieldline.transport.mqtt.testkit.FakeDeviceRegistry;
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
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttSubAckMessage;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The provisioning session on the production pipeline in an EmbeddedChannel, with a provisioning
 * port whose answers the test completes: the {@code provision} login, what the session lets
 * through, the order of PUBACK and answer, QoS 2, and when it closes.
 */
class ProvisionSessionTest {

  private static final String REQUEST =
      "{\"provisionDeviceKey\":\"k\",\"provisionDeviceSecret\":\"s\"}";

  private final MqttTransportConfig config = TestConfigs.mqtt("connect-timeout = 2 seconds");
  private final FakeDeviceRegistry devices = new FakeDeviceRegistry();
  private final FakeProvisioning registry = new FakeProvisioning();
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final List<EmbeddedChannel> channels = new ArrayList<>();
  private final EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
  private final EmbeddedChannel decoder = new EmbeddedChannel(new MqttDecoder());

  @AfterEach
  void close() {
    channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    encoder.finishAndReleaseAll();
    decoder.finishAndReleaseAll();
  }

  private EmbeddedChannel open(Optional<DeviceProvisioning> provisioning) {
    SessionContext context =
        new SessionContext(
            config,
            devices,
            new FakeDeviceInbox(),
            new FakeDeadLetterStore(),
            PayloadParser.defaults(),
            new SessionRegistry(),
            device -> {},
            new MqttMetrics(meters),
            new PreAuthLimits(config),
            new LocalDeviceEvents(),
            new FakeTelemetryQueries(),
            () -> false,
            new DeviceServices(FirmwareDelivery.none(), provisioning));
    MqttSessionHandler session = new MqttSessionHandler(context);
    EmbeddedChannel channel =
        new EmbeddedChannel(
            new ChannelInitializer<Channel>() {
              @Override
              protected void initChannel(Channel ch) {
                MqttPipeline.addStages(ch.pipeline(), config, session);
              }
            });
    channel.freezeTime();
    channels.add(channel);
    return channel;
  }

  private void send(EmbeddedChannel channel, MqttMessage... messages) {
    List<ByteBuf> encoded = new ArrayList<>();
    for (MqttMessage message : messages) {
      encoder.writeOutbound(message);
      ByteBuf buf;
      while ((buf = encoder.readOutbound()) != null) {
        encoded.add(buf);
      }
    }
    channel.writeInbound(Unpooled.wrappedBuffer(encoded.toArray(new ByteBuf[0])));
  }

  private List<String> received(EmbeddedChannel channel) {
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

  private static String describe(MqttMessage message) {
    MqttMessageType type = message.fixedHeader().messageType();
    return switch (type) {
      case CONNACK ->
          String.format(
              "CONNACK 0x%02x",
              ((MqttConnAckMessage) message).variableHeader().connectReturnCode().byteValue());
      case PUBACK, PUBREC, PUBCOMP, UNSUBACK ->
          type + " " + ((MqttMessageIdVariableHeader) message.variableHeader()).messageId();
      case SUBACK -> "SUBACK " + ((MqttSubAckMessage) message).payload().grantedQoSLevels();
      case PUBLISH -> {
        MqttPublishMessage publish = (MqttPublishMessage) message;
        yield "PUBLISH q"
            + publish.fixedHeader().qosLevel().value()
            + " "
            + publish.variableHeader().topicName()
            + " "
            + publish.payload().toString(StandardCharsets.UTF_8);
      }
      default -> type.toString();
    };
  }

  private static MqttMessage connect(String clientId, @Nullable String userName) {
    MqttMessageBuilders.ConnectBuilder connect =
        MqttMessageBuilders.connect()
            .protocolVersion(MqttVersion.MQTT_3_1_1)
            .clientId(clientId)
            .cleanSession(true)
            .keepAlive(60);
    if (userName != null) {
      connect.hasUser(true).username(userName);
    }
    return connect.build();
  }

  private static MqttMessage publish(String topic, MqttQoS qos, int packetId, String payload) {
    return MqttMessageBuilders.publish()
        .topicName(topic)
        .qos(qos)
        .messageId(packetId)
        .retained(false)
        .payload(Unpooled.copiedBuffer(payload, StandardCharsets.UTF_8))
        .build();
  }

  private static MqttMessage subscribe(int packetId, String filter) {
    return MqttMessageBuilders.subscribe()
        .messageId(packetId)
        .addSubscription(MqttQoS.AT_LEAST_ONCE, filter)
        .build();
  }

  private static void advance(EmbeddedChannel channel, long millis) {
    channel.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
    channel.runScheduledPendingTasks();
    channel.runPendingTasks();
  }

  private double rejected(String reason) {
    Counter counter = meters.find("fieldline.mqtt.rejected").tag("reason", reason).counter();
    return counter == null ? 0 : counter.count();
  }

  private EmbeddedChannel provisioningSession() {
    EmbeddedChannel channel = open(Optional.of(registry));
    send(channel, connect("any-client", "provision"));
    assertThat(received(channel)).containsExactly("CONNACK 0x00");
    return channel;
  }

  @Test
  void should_accept_a_provision_login_without_looking_a_credential_up() {
    devices.holdLookups();
    EmbeddedChannel byUserName = provisioningSession();
    EmbeddedChannel byClientId = open(Optional.of(registry));
    send(byClientId, connect("provision", null));

    assertThat(received(byClientId)).containsExactly("CONNACK 0x00");
    assertThat(byUserName.isActive()).isTrue();
    assertThat(devices.pendingLookups()).isEmpty();
  }

  @Test
  void should_send_the_puback_then_the_answer_when_provisioning_completes() {
    EmbeddedChannel channel = provisioningSession();
    send(channel, subscribe(1, ProvisionSession.RESPONSE_TOPIC));
    assertThat(received(channel)).containsExactly("SUBACK [1]");

    send(channel, publish(ProvisionSession.REQUEST_TOPIC, MqttQoS.AT_LEAST_ONCE, 7, REQUEST));
    assertThat(received(channel)).isEmpty();
    assertThat(registry.requests).containsExactly(REQUEST);

    registry.answers.get(0).complete(ProvisionResponse.notFound());

    assertThat(received(channel))
        .containsExactly(
            "PUBACK 7",
            "PUBLISH q1 /provision/response "
                + "{\"status\":\"NOT_FOUND\",\"errorMsg\":\"Provision data was not found!\"}");
    // Still open: the client disconnects once it has read the answer...
    assertThat(channel.isActive()).isTrue();
    // ...or the server closes the session connect-timeout after the answer.
    advance(channel, 2_100);
    assertThat(channel.isActive()).isFalse();
  }

  @Test
  void should_answer_qos_2_requests_with_pubrec_at_once_and_pubcomp_on_pubrel() {
    EmbeddedChannel channel = provisioningSession();

    send(channel, publish(ProvisionSession.REQUEST_TOPIC, MqttQoS.EXACTLY_ONCE, 3, REQUEST));
    assertThat(received(channel)).containsExactly("PUBREC 3");
    send(
        channel,
        new MqttMessage(
            new MqttFixedHeader(MqttMessageType.PUBREL, false, MqttQoS.AT_LEAST_ONCE, false, 2),
            MqttMessageIdVariableHeader.from(3)));
    assertThat(received(channel)).containsExactly("PUBCOMP 3");

    registry
        .answers
        .get(0)
        .complete(
            ProvisionResponse.success(DeviceId.random(), new DeviceCredentials.AccessToken("t")));
    // Not subscribed: the answer is written with QoS 0, as ThingsBoard writes it anyway.
    assertThat(received(channel))
        .containsExactly(
            "PUBLISH q0 /provision/response "
                + "{\"status\":\"SUCCESS\",\"credentialsType\":\"ACCESS_TOKEN\","
                + "\"credentialsValue\":\"t\"}");
  }

  @Test
  void should_refuse_subscriptions_other_than_the_answer_topic() {
    EmbeddedChannel channel = provisioningSession();

    send(channel, subscribe(2, "v1/devices/me/attributes"));

    assertThat(received(channel)).containsExactly("SUBACK [128]");
    assertThat(channel.isActive()).isTrue();
  }

  @Test
  void should_close_without_provisioning_when_the_session_publishes_telemetry() {
    EmbeddedChannel channel = provisioningSession();

    send(channel, publish("v1/devices/me/telemetry", MqttQoS.AT_LEAST_ONCE, 4, "{\"t\":1}"));

    assertThat(received(channel)).isEmpty();
    assertThat(channel.isActive()).isFalse();
    assertThat(registry.requests).isEmpty();
    assertThat(rejected("topic")).isEqualTo(1);
  }

  @Test
  void should_close_when_a_second_request_comes() {
    EmbeddedChannel channel = provisioningSession();
    send(channel, publish(ProvisionSession.REQUEST_TOPIC, MqttQoS.AT_MOST_ONCE, 0, REQUEST));

    send(channel, publish(ProvisionSession.REQUEST_TOPIC, MqttQoS.AT_MOST_ONCE, 0, REQUEST));

    assertThat(channel.isActive()).isFalse();
    assertThat(registry.requests).hasSize(1);
    assertThat(rejected("protocol")).isEqualTo(1);
  }

  @Test
  void should_close_when_no_request_arrives_within_the_connect_timeout() {
    EmbeddedChannel channel = provisioningSession();

    advance(channel, 1_900);
    assertThat(channel.isActive()).isTrue();
    advance(channel, 200);

    assertThat(channel.isActive()).isFalse();
    assertThat(rejected("connect_timeout")).isEqualTo(1);
  }

  @Test
  void should_look_the_user_name_up_as_a_token_when_no_provisioning_is_served() {
    devices.holdLookups();
    EmbeddedChannel channel = open(Optional.empty());

    send(channel, connect("any-client", "provision"));

    // An ordinary CONNECT: its token is being looked up.
    assertThat(received(channel)).isEmpty();
    assertThat(devices.pendingLookups()).hasSize(1);
  }

  /** A provisioning port whose answers the test completes. */
  private static final class FakeProvisioning implements DeviceProvisioning {

    final List<String> requests = new CopyOnWriteArrayList<>();
    final List<CompletableFuture<ProvisionResponse>> answers = new CopyOnWriteArrayList<>();

    @Override
    public CompletionStage<ProvisionResponse> provision(
        byte[] payload, @Nullable InetAddress source) {
      requests.add(new String(payload, StandardCharsets.UTF_8));
      CompletableFuture<ProvisionResponse> answer = new CompletableFuture<>();
      answers.add(answer);
      return answer;
    }
  }
}
