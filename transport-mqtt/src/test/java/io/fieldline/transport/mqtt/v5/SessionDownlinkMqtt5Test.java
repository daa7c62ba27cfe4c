package io.fieldline.transport.mqtt.v5;

import static io.fieldline.transport.mqtt.testkit.SessionClient.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent.AttributesUpdated;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.mqtt.testkit.RecordingRpcCallback;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttPubReplyMessageVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The downlink to MQTT 5 clients: the client's Receive Maximum and Maximum Packet Size are kept to,
 * nothing is resent on a live connection (§4.4), and a PUBACK with an error reason code refuses a
 * request. Through the production pipeline in an EmbeddedChannel.
 */
class SessionDownlinkMqtt5Test extends SessionHandlerTestBase {

  private static final String ATTRIBUTES = "v1/devices/me/attributes";

  /** An MQTT 5 CONNECT: clean start, no session expiry unless given, with the given properties. */
  private static MqttMessage connect(boolean cleanStart, int... idValuePairs) {
    MqttProperties properties = new MqttProperties();
    for (int i = 0; i < idValuePairs.length; i += 2) {
      properties.add(new MqttProperties.IntegerProperty(idValuePairs[i], idValuePairs[i + 1]));
    }
    return MqttMessageBuilders.connect()
        .protocolVersion(MqttVersion.MQTT_5)
        .clientId("c5")
        .cleanSession(cleanStart)
        .keepAlive(60)
        .hasUser(true)
        .username(TOKEN)
        .properties(properties)
        .build();
  }

  private static MqttMessage puback(int packetId, int reasonCode) {
    return new MqttMessage(
        new MqttFixedHeader(MqttMessageType.PUBACK, false, MqttQoS.AT_MOST_ONCE, false, 0),
        new MqttPubReplyMessageVariableHeader(
            packetId, (byte) reasonCode, MqttProperties.NO_PROPERTIES));
  }

  private SessionClient subscribed(SessionFixture fixture, MqttMessage connect, String filter) {
    SessionClient client = open(fixture);
    client.send(connect);
    assertThat(client.received()).containsExactly("CONNACK 0x00");
    client.send(subscribe(1, filter, MqttQoS.AT_LEAST_ONCE));
    assertThat(client.received()).singleElement().asString().startsWith("SUBACK 1");
    return client;
  }

  private static void push(SessionFixture fixture, DeviceId device, long value) {
    fixture.events.deliver(
        new AttributesUpdated(
            device,
            AttributeScope.SHARED_SCOPE,
            List.of(new AttributeKvEntry(1L, KvEntry.of("v", value)))));
  }

  private static void request(
      SessionFixture fixture, DeviceId device, String params, RecordingRpcCallback callback) {
    ToDeviceRpc rpc =
        new ToDeviceRpc(UUID.randomUUID(), device, "m", params, false, false, 10_000, 0, 0, null);
    fixture.events.deliver(new RpcRequested(device, rpc, callback));
  }

  @Test
  void should_keep_to_the_clients_receive_maximum() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client =
        subscribed(fixture, connect(true, MqttProperties.RECEIVE_MAXIMUM, 2), ATTRIBUTES);

    for (long v = 1; v <= 4; v++) {
      push(fixture, device, v);
    }

    assertThat(client.received())
        .containsExactly(
            "PUBLISH#1 " + ATTRIBUTES + " {\"v\":1}", "PUBLISH#2 " + ATTRIBUTES + " {\"v\":2}");
    client.send(puback(1, 0));
    assertThat(client.received()).containsExactly("PUBLISH#3 " + ATTRIBUTES + " {\"v\":3}");
  }

  @Test
  void should_not_resend_on_a_live_connection_but_on_the_next_one_of_a_kept_session() {
    SessionFixture fixture = fixture("downlink.retransmit-interval = 1 s");
    DeviceId device = device(fixture).id();
    MqttMessage kept = connect(false, MqttProperties.SESSION_EXPIRY_INTERVAL, 600);
    SessionClient first = subscribed(fixture, kept, ATTRIBUTES);
    push(fixture, device, 1);
    assertThat(first.received()).containsExactly("PUBLISH#1 " + ATTRIBUTES + " {\"v\":1}");

    first.advanceTime(60_000);
    assertThat(first.received()).isEmpty();
    first.close();

    SessionClient second = open(fixture);
    second.send(connect(false, MqttProperties.SESSION_EXPIRY_INTERVAL, 600));
    assertThat(second.received())
        .containsExactly(
            "CONNACK 0x00 session-present", "PUBLISH#1 dup " + ATTRIBUTES + " {\"v\":1}");
  }

  @Test
  void should_give_up_a_request_larger_than_the_clients_maximum_packet_size() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client =
        subscribed(
            fixture,
            connect(true, MqttProperties.MAXIMUM_PACKET_SIZE, 128),
            "v1/devices/me/rpc/request/+");
    RecordingRpcCallback large = new RecordingRpcCallback();
    RecordingRpcCallback small = new RecordingRpcCallback();

    request(fixture, device, "{\"blob\":\"" + "x".repeat(200) + "\"}", large);
    request(fixture, device, "{}", small);

    assertThat(client.received())
        .containsExactly("PUBLISH#1 v1/devices/me/rpc/request/2 {\"method\":\"m\",\"params\":{}}");
    assertThat(large.calls())
        .singleElement()
        .asString()
        .startsWith("undelivered:the request of ")
        .endsWith("exceeds the client's maximum packet size of 128 bytes");
    assertThat(small.calls()).containsExactly("sent");
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "too_large")).isEqualTo(1);
  }

  @Test
  void should_report_undelivered_when_the_device_refuses_a_request_in_its_puback() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, connect(true), "v1/devices/me/rpc/request/+");
    RecordingRpcCallback callback = new RecordingRpcCallback();
    request(fixture, device, "{}", callback);
    client.received();

    client.send(puback(1, 0x80));

    assertThat(callback.calls())
        .containsExactly("sent", "undelivered:the device refused it (PUBACK reason 0x80)");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "undelivered")).isEqualTo(1);
  }
}
