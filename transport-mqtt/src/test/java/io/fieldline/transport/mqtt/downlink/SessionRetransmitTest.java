package io.fieldline.transport.mqtt.downlink;

import static io.fieldline.transport.mqtt.downlink.SessionServerRpcTest.REQUEST_BODY;
import static io.fieldline.transport.mqtt.downlink.SessionServerRpcTest.RPC_FILTER;
import static io.fieldline.transport.mqtt.downlink.SessionServerRpcTest.rpc;
import static io.fieldline.transport.mqtt.downlink.SessionSharedAttributesTest.held;
import static io.fieldline.transport.mqtt.downlink.SessionSharedAttributesTest.updated;
import static io.fieldline.transport.mqtt.testkit.SessionClient.connectMessage;
import static io.fieldline.transport.mqtt.testkit.SessionClient.puback;
import static io.fieldline.transport.mqtt.testkit.SessionClient.subscribe;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.mqtt.testkit.RecordingRpcCallback;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * QoS 1 messages to MQTT 3.1.1 devices: written again with DUP while unacknowledged, and kept by a
 * persistent session for its next connection. Through the production pipeline in an
 * EmbeddedChannel, on the channel's own clock.
 */
class SessionRetransmitTest extends SessionHandlerTestBase {

  private static final String PUSH = "v1/devices/me/attributes {\"a\":1}";

  /** Fails every write from now on, as a connection that dies in the middle of a flush does. */
  private static final class DeadSocket extends ChannelOutboundHandlerAdapter {
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      ReferenceCountUtil.release(msg);
      promise.setFailure(new ClosedChannelException());
    }
  }

  /** A CleanSession = 0 connection; {@code expected}: all it received once connected. */
  private SessionClient persistent(SessionFixture fixture, String... expected) {
    SessionClient client = open(fixture);
    client.send(connectMessage(TOKEN, false, 60));
    assertThat(client.received()).containsExactly(expected);
    return client;
  }

  @Test
  void should_write_an_unacknowledged_message_again_with_dup_every_retransmit_interval() {
    SessionFixture fixture = fixture("downlink.retransmit-interval = 2 s");
    DeviceId device = device(fixture).id();
    SessionClient client = connected(fixture);
    client.send(subscribe(1, "v1/devices/me/attributes", MqttQoS.AT_LEAST_ONCE));
    client.received();
    fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("a", 1L)));
    assertThat(client.received()).containsExactly("PUBLISH#1 " + PUSH);

    client.advanceTime(1_999);
    assertThat(client.received()).isEmpty();
    client.advanceTime(1);
    assertThat(client.received()).containsExactly("PUBLISH#1 dup " + PUSH);
    client.advanceTime(2_000);
    assertThat(client.received()).containsExactly("PUBLISH#1 dup " + PUSH);

    client.send(puback(1));
    client.advanceTime(10_000);
    assertThat(client.received()).isEmpty();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "retransmitted")).isEqualTo(2);
  }

  @Test
  void should_resend_a_persistent_sessions_unacknowledged_messages_when_it_reconnects() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient first = persistent(fixture, "CONNACK 0x00");
    first.send(
        subscribe(1, "v1/devices/me/attributes", MqttQoS.AT_LEAST_ONCE),
        subscribe(2, RPC_FILTER, MqttQoS.AT_LEAST_ONCE));
    first.received();
    RecordingRpcCallback callback = new RecordingRpcCallback();
    fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("a", 1L)));
    fixture.events.deliver(new RpcRequested(device, rpc(device, false, 60_000), callback));
    assertThat(first.received())
        .containsExactly(
            "PUBLISH#1 " + PUSH, "PUBLISH#2 v1/devices/me/rpc/request/1 " + REQUEST_BODY);

    first.close();
    assertThat(callback.calls()).containsExactly("sent");
    assertThat(held(fixture)).isEqualTo(2);
    SessionClient second =
        persistent(
            fixture,
            "CONNACK 0x00 session-present",
            "PUBLISH#1 dup " + PUSH,
            "PUBLISH#2 dup v1/devices/me/rpc/request/1 " + REQUEST_BODY);

    second.send(puback(1), puback(2));
    assertThat(callback.calls()).containsExactly("sent", "delivered");
    second.send(
        SessionClient.publish(
            "v1/devices/me/rpc/response/1", MqttQoS.AT_MOST_ONCE, 0, "{\"ok\":true}"));
    second.runTasks();
    assertThat(callback.calls()).containsExactly("sent", "delivered", "responded:{\"ok\":true}");
    assertThat(held(fixture)).isZero();
  }

  @Test
  void should_give_up_what_a_persistent_session_kept_when_a_clean_session_replaces_it() {
    SessionFixture fixture = fixture();
    SessionClient first = subscribedToRpc(fixture);
    RecordingRpcCallback callback = requested(fixture, first, true);
    first.close();

    connected(fixture); // CleanSession = 1

    assertThat(callback.calls())
        .containsExactly("sent", "undelivered:the session ended before it was delivered");
    assertThat(held(fixture)).isZero();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "discarded")).isEqualTo(1);
  }

  @Test
  void should_not_keep_qos0_messages_for_a_persistent_session() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient first = persistent(fixture, "CONNACK 0x00");
    first.send(subscribe(1, "v1/devices/me/attributes", MqttQoS.AT_MOST_ONCE));
    first.received();
    first.channel.unsafe().outboundBuffer().setUserDefinedWritability(1, false);
    first.runTasks();
    fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("a", 1L)));
    first.runTasks();
    assertThat(held(fixture)).as("waiting for the socket").isEqualTo(1);

    first.close();

    assertThat(held(fixture)).isZero();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "discarded")).isEqualTo(1);
    persistent(fixture, "CONNACK 0x00 session-present");
  }

  /** A new kept session subscribed to server-side RPC at QoS 1. */
  private SessionClient subscribedToRpc(SessionFixture fixture) {
    SessionClient client = persistent(fixture, "CONNACK 0x00");
    client.send(subscribe(1, RPC_FILTER, MqttQoS.AT_LEAST_ONCE));
    assertThat(client.received()).containsExactly("SUBACK 1 [1]");
    return client;
  }

  /** Offers the device a request, which {@code client} receives; returns its callback. */
  private static RecordingRpcCallback requested(
      SessionFixture fixture, SessionClient client, boolean oneway) {
    DeviceId device = device(fixture).id();
    RecordingRpcCallback callback = new RecordingRpcCallback();
    fixture.events.deliver(new RpcRequested(device, rpc(device, oneway, 60_000), callback));
    assertThat(client.received()).hasSize(1);
    return callback;
  }

  /** A kept session subscribed to RPC at QoS 1 whose connection then fails every write. */
  private SessionClient dying(SessionFixture fixture) {
    SessionClient client = subscribedToRpc(fixture);
    client.channel.pipeline().addFirst(new DeadSocket());
    return client;
  }

  @Test
  void should_send_a_request_whose_first_write_failed_as_new_when_the_session_resumes() {
    SessionFixture fixture = fixture("downlink.max-pending-rpc = 1");
    DeviceId device = device(fixture).id();
    SessionClient first = dying(fixture);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    fixture.events.deliver(new RpcRequested(device, rpc(device, false, 5_000), callback));
    first.runTasks();
    assertThat(callback.calls()).as("never written").isEmpty();
    first.close();

    SessionClient second =
        persistent(
            fixture,
            "CONNACK 0x00 session-present",
            "PUBLISH#1 v1/devices/me/rpc/request/1 " + REQUEST_BODY);
    second.send(puback(1));
    assertThat(callback.calls()).containsExactly("sent", "delivered");
    second.advanceTime(5_000);

    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "timed_out")).isEqualTo(1);
    RecordingRpcCallback next = new RecordingRpcCallback();
    assertThat(fixture.events.deliver(new RpcRequested(device, rpc(device, true, 5_000), next)))
        .as("the timed-out request no longer holds the session's only RPC slot")
        .isOne();
  }

  @Test
  void should_not_send_a_request_whose_first_write_failed_once_it_expired() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient first = dying(fixture);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    long expiration = System.currentTimeMillis() + 200;
    ToDeviceRpc expiring =
        new ToDeviceRpc(
            UUID.randomUUID(),
            device,
            "setGpio",
            "{\"pin\":4,\"on\":true}",
            false,
            false,
            60_000,
            expiration,
            0,
            null);
    fixture.events.deliver(new RpcRequested(device, expiring, callback));
    first.runTasks();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "sent"))
        .as("written (and failed) before it expired")
        .isEqualTo(1);
    first.close();
    await().until(() -> System.currentTimeMillis() > expiration);

    persistent(fixture, "CONNACK 0x00 session-present");

    assertThat(callback.calls())
        .containsExactly("undelivered:the request expired before it was sent");
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "expired")).isEqualTo(1);
    assertThat(held(fixture)).isZero();
  }

  @Test
  void should_give_up_a_connected_kept_sessions_requests_when_its_device_connects_elsewhere() {
    SessionFixture fixture = fixture();
    SessionClient first = subscribedToRpc(fixture);
    RecordingRpcCallback callback = requested(fixture, first, false);

    // What the cluster calls when the device's session was accepted on another node.
    assertThat(fixture.sessions.closeSession(device(fixture).id())).isTrue();

    assertThat(first.isOpen()).isFalse();
    assertThat(callback.calls())
        .containsExactly("sent", "undelivered:the connection closed before it was delivered");
    assertThat(held(fixture)).isZero();
    persistent(fixture, "CONNACK 0x00"); // the session here ended with it
  }

  @Test
  void should_end_a_disconnected_kept_session_when_its_device_connects_elsewhere() {
    SessionFixture fixture = fixture();
    SessionClient first = subscribedToRpc(fixture);
    RecordingRpcCallback callback = requested(fixture, first, false);
    first.close();
    assertThat(callback.calls()).containsExactly("sent");

    assertThat(fixture.sessions.closeSession(device(fixture).id()))
        .as("no connection here")
        .isFalse();

    assertThat(callback.calls())
        .containsExactly("sent", "undelivered:the session ended before it was delivered");
    assertThat(held(fixture)).isZero();
    assertThat(fixture.sessions.persistentSessions()).isZero();
    persistent(fixture, "CONNACK 0x00");
  }
}
