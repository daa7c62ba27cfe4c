package io.fieldline.transport.mqtt.downlink;

import static io.fieldline.transport.mqtt.testkit.SessionClient.puback;
import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.mqtt.testkit.RecordingRpcCallback;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Server-side RPC through a session: taken only when subscribed and with room, sent on {@code
 * v1/devices/me/rpc/request/{n}}, reported through the request's callback, answers routed back by
 * {@code n}. Through the production pipeline in an EmbeddedChannel.
 */
class SessionServerRpcTest extends SessionHandlerTestBase {

  static final String RPC_FILTER = "v1/devices/me/rpc/request/+";
  static final String REQUEST_BODY = "{\"method\":\"setGpio\",\"params\":{\"pin\":4,\"on\":true}}";

  static ToDeviceRpc rpc(DeviceId device, boolean oneway, long timeoutMillis) {
    return new ToDeviceRpc(
        UUID.randomUUID(),
        device,
        "setGpio",
        "{\"pin\":4,\"on\":true}",
        oneway,
        false,
        timeoutMillis,
        0,
        0,
        null);
  }

  private SessionClient subscribed(SessionFixture fixture, MqttQoS qos) {
    SessionClient client = connected(fixture);
    client.send(subscribe(1, RPC_FILTER, qos));
    assertThat(client.received()).containsExactly("SUBACK 1 [" + qos.value() + "]");
    return client;
  }

  private static int offer(SessionFixture fixture, ToDeviceRpc rpc, RecordingRpcCallback callback) {
    return fixture.events.deliver(new RpcRequested(rpc.deviceId(), rpc, callback));
  }

  private static String answer(SessionClient client, String n, int packetId, String body) {
    client.send(publish("v1/devices/me/rpc/response/" + n, MqttQoS.AT_LEAST_ONCE, packetId, body));
    return String.join(", ", client.received());
  }

  @Test
  void should_send_two_way_requests_and_route_each_answer_to_its_request_by_id() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_MOST_ONCE);
    RecordingRpcCallback first = new RecordingRpcCallback();
    RecordingRpcCallback second = new RecordingRpcCallback();

    assertThat(offer(fixture, rpc(device, false, 10_000), first)).isOne();
    assertThat(offer(fixture, rpc(device, false, 10_000), second)).isOne();

    assertThat(client.received())
        .containsExactly(
            "PUBLISH v1/devices/me/rpc/request/1 " + REQUEST_BODY,
            "PUBLISH v1/devices/me/rpc/request/2 " + REQUEST_BODY);
    // QoS 0: delivered as soon as written.
    assertThat(first.calls()).containsExactly("sent", "delivered");
    assertThat(answer(client, "2", 5, "{\"pin\":4,\"state\":1}")).isEqualTo("PUBACK 5");
    assertThat(second.calls())
        .containsExactly("sent", "delivered", "responded:{\"pin\":4,\"state\":1}");
    assertThat(first.calls()).containsExactly("sent", "delivered");
    assertThat(answer(client, "1", 6, "\"done\"")).isEqualTo("PUBACK 6");
    assertThat(first.calls()).containsExactly("sent", "delivered", "responded:\"done\"");
    // A second answer to the same request finds nothing pending.
    assertThat(answer(client, "1", 7, "\"again\"")).isEqualTo("PUBACK 7");
    assertThat(first.calls()).hasSize(3);
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "responded")).isEqualTo(2);
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "unknown_response")).isEqualTo(1);
  }

  @Test
  void should_report_a_qos1_one_way_request_delivered_at_its_puback_and_then_forget_it() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_LEAST_ONCE);
    RecordingRpcCallback callback = new RecordingRpcCallback();

    offer(fixture, rpc(device, true, 10_000), callback);

    assertThat(client.received())
        .containsExactly("PUBLISH#1 v1/devices/me/rpc/request/1 " + REQUEST_BODY);
    assertThat(callback.calls()).containsExactly("sent");
    client.send(puback(1));
    assertThat(callback.calls()).containsExactly("sent", "delivered");
    assertThat(answer(client, "1", 3, "{}")).isEqualTo("PUBACK 3");
    assertThat(callback.calls()).containsExactly("sent", "delivered");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "unknown_response")).isEqualTo(1);
  }

  @Test
  void should_take_an_answer_to_a_one_way_request_before_its_puback_as_its_delivery() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_LEAST_ONCE);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    offer(fixture, rpc(device, true, 10_000), callback);
    client.received();

    assertThat(answer(client, "1", 3, "{}")).isEqualTo("PUBACK 3");

    assertThat(callback.calls()).containsExactly("sent", "delivered");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "delivered")).isEqualTo(1);
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "unknown_response")).isZero();
    client.send(puback(1));
    assertThat(callback.calls()).containsExactly("sent", "delivered");
  }

  @Test
  void should_forget_an_unanswered_two_way_request_after_its_timeout() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_MOST_ONCE);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    offer(fixture, rpc(device, false, 5_000), callback);
    client.received();

    client.advanceTime(4_000);
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "timed_out")).isZero();
    client.advanceTime(1_000);

    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "timed_out")).isEqualTo(1);
    assertThat(answer(client, "1", 2, "\"late\"")).isEqualTo("PUBACK 2");
    assertThat(callback.calls()).containsExactly("sent", "delivered");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "unknown_response")).isEqualTo(1);
  }

  @Test
  void should_acknowledge_and_count_answers_to_unknown_requests() {
    SessionFixture fixture = fixture();
    SessionClient client = subscribed(fixture, MqttQoS.AT_MOST_ONCE);

    assertThat(answer(client, "99", 3, "{}")).isEqualTo("PUBACK 3");
    assertThat(answer(client, "not-a-number", 4, "{}")).isEqualTo("PUBACK 4");

    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "unknown_response")).isEqualTo(2);
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_not_take_a_request_without_a_subscription_or_beyond_the_pending_bound() {
    SessionFixture fixture = fixture("downlink.max-pending-rpc = 1");
    DeviceId device = device(fixture).id();
    SessionClient client = connected(fixture);
    RecordingRpcCallback unsubscribed = new RecordingRpcCallback();
    assertThat(offer(fixture, rpc(device, false, 10_000), unsubscribed)).isZero();
    client.send(subscribe(1, RPC_FILTER, MqttQoS.AT_MOST_ONCE));
    client.received();

    assertThat(offer(fixture, rpc(device, false, 10_000), new RecordingRpcCallback())).isOne();
    RecordingRpcCallback beyond = new RecordingRpcCallback();
    assertThat(offer(fixture, rpc(device, false, 10_000), beyond)).isZero();

    assertThat(unsubscribed.calls()).isEmpty();
    assertThat(beyond.calls()).isEmpty();
    assertThat(client.received()).hasSize(1);
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "queue_full")).isEqualTo(1);
  }

  @Test
  void should_take_and_report_undelivered_a_request_larger_than_a_session_may_ever_hold() {
    SessionFixture fixture = fixture("downlink.max-queued-bytes = 1 KiB");
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_LEAST_ONCE);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    String blob = "\"" + "x".repeat(2_000) + "\"";
    ToDeviceRpc large =
        new ToDeviceRpc(
            UUID.randomUUID(), device, "upload", blob, false, false, 10_000, 0, 0, null);

    assertThat(offer(fixture, large, callback)).isOne();

    assertThat(client.received()).isEmpty();
    assertThat(callback.calls())
        .singleElement()
        .asString()
        .startsWith("undelivered:the request of ")
        .endsWith("exceeds 1024 bytes, the most the session holds (max-queued-bytes)");
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "too_large")).isEqualTo(1);
  }

  @Test
  void should_report_undelivered_when_a_clean_session_closes_before_the_puback() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_LEAST_ONCE);
    RecordingRpcCallback callback = new RecordingRpcCallback();
    offer(fixture, rpc(device, false, 10_000), callback);
    client.received();

    client.close();

    assertThat(callback.calls())
        .containsExactly("sent", "undelivered:the connection closed before it was delivered");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "undelivered")).isEqualTo(1);
    assertThat(SessionSharedAttributesTest.held(fixture)).isZero();
    assertThat(offer(fixture, rpc(device, false, 10_000), new RecordingRpcCallback())).isZero();
  }

  @Test
  void should_announce_an_rpc_subscription_so_that_waiting_requests_are_offered_again() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    // Stands in for the RPC service: a request waits until the device subscribes.
    RecordingRpcCallback waiting = new RecordingRpcCallback();
    List<DeviceEvent> heard = new CopyOnWriteArrayList<>();
    fixture.events.subscribe(
        device,
        event -> {
          heard.add(event);
          if (event instanceof DeviceEvent.RpcSubscribed) {
            offer(fixture, rpc(device, false, 10_000), waiting);
          }
          return false;
        });
    SessionClient client = connected(fixture);

    client.send(subscribe(1, "v1/devices/me/attributes", MqttQoS.AT_LEAST_ONCE));
    client.received();
    assertThat(heard).isEmpty();
    client.send(subscribe(2, RPC_FILTER, MqttQoS.AT_LEAST_ONCE));

    assertThat(client.received())
        .containsExactly("SUBACK 2 [1]", "PUBLISH#1 v1/devices/me/rpc/request/1 " + REQUEST_BODY);
    assertThat(heard).hasSize(2).first().isEqualTo(new DeviceEvent.RpcSubscribed(device));
    assertThat(waiting.calls()).containsExactly("sent");
  }
}
