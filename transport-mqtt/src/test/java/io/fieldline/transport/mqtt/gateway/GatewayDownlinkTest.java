package io.fieldline.transport.mqtt.gateway;

import static io.fieldline.transport.mqtt.gateway.GatewayFixture.puback;
import static io.fieldline.transport.mqtt.gateway.GatewayFixture.publish;
import static io.fieldline.transport.mqtt.gateway.GatewayFixture.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.device.Device;
import io.fieldline.common.events.DeviceEvent.AttributesDeleted;
import io.fieldline.common.events.DeviceEvent.AttributesUpdated;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.events.DeviceEvent.RpcSubscribed;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.rpc.ToDeviceRpc;
import io.fieldline.transport.mqtt.testkit.RecordingRpcCallback;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The downlink half of the gateway API on a gateway's session, through the production pipeline in
 * an EmbeddedChannel: shared-attribute pushes and server-side RPC of the children the session
 * holds, answers routed back by child and id, attribute requests for children in ThingsBoard's
 * three shapes, and the bounds.
 */
class GatewayDownlinkTest {

  private static final String CONNECT = "v1/gateway/connect";
  private static final String DISCONNECT = "v1/gateway/disconnect";
  private static final String ATTRIBUTES = "v1/gateway/attributes";
  private static final String RESPONSE = "v1/gateway/attributes/response";
  private static final String REQUEST = "v1/gateway/attributes/request";
  private static final String RPC = "v1/gateway/rpc";

  private final List<GatewayFixture.Client> clients = new ArrayList<>();

  @AfterEach
  void closeClients() {
    clients.forEach(GatewayFixture.Client::close);
  }

  /** A gateway "gw" connected, subscribed to {@code filters} at {@code qos}. */
  private GatewayFixture.Client gateway(GatewayFixture fixture, MqttQoS qos, String... filters) {
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = fixture.open();
    clients.add(client);
    assertThat(client.connect("gw-token", true)).startsWith("CONNACK 0x00");
    if (filters.length > 0) {
      client.send(subscribe(1, qos, filters));
      assertThat(client.received()).hasSize(1).allMatch(packet -> packet.startsWith("SUBACK 1"));
    }
    return client;
  }

  private static Device connectChild(
      GatewayFixture fixture, GatewayFixture.Client client, String name, int packetId) {
    client.send(publish(CONNECT, packetId, "{\"device\":\"" + name + "\"}"));
    assertThat(client.received()).contains("PUBACK " + packetId);
    return fixture.registry.named(name).orElseThrow();
  }

  private static AttributesUpdated shared(DeviceId device, String key, String value) {
    return new AttributesUpdated(
        device,
        AttributeScope.SHARED_SCOPE,
        List.of(new AttributeKvEntry(1L, KvEntry.of(key, value))));
  }

  private static ToDeviceRpc rpc(DeviceId device, boolean oneway) {
    return new ToDeviceRpc(
        UUID.randomUUID(), device, "setGpio", "{\"pin\":4}", oneway, false, 10_000, 0, 0, null);
  }

  @Test
  void should_push_a_childs_shared_attributes_to_the_gateway_when_it_subscribed() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE, ATTRIBUTES);
    Device a = connectChild(fixture, client, "Pump A", 2);
    Device stranger = fixture.registry.add("B", "b-token", null);

    assertThat(fixture.events.deliver(shared(a.id(), "target", "42"))).isOne();
    assertThat(
            fixture.events.deliver(
                new AttributesDeleted(a.id(), AttributeScope.SHARED_SCOPE, List.of("old"))))
        .isOne();
    assertThat(
            fixture.events.deliver(
                new AttributesUpdated(
                    a.id(),
                    AttributeScope.CLIENT_SCOPE,
                    List.of(new AttributeKvEntry(1L, KvEntry.of("fw", "1"))))))
        .as("client attributes are not pushed")
        .isZero();
    assertThat(fixture.events.deliver(shared(stranger.id(), "target", "1")))
        .as("a device the gateway never named")
        .isZero();

    assertThat(client.received())
        .containsExactly(
            "PUBLISH v1/gateway/attributes {\"device\":\"Pump A\",\"data\":{\"target\":\"42\"}}",
            "PUBLISH v1/gateway/attributes {\"device\":\"Pump"
                + " A\",\"data\":{\"deleted\":[\"old\"]}}");
  }

  @Test
  void should_push_nothing_when_the_gateway_did_not_subscribe() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE);
    Device a = connectChild(fixture, client, "A", 2);

    assertThat(fixture.events.deliver(shared(a.id(), "target", "42"))).isZero();
    assertThat(fixture.events.deliver(new RpcRequested(a.id(), rpc(a.id(), false), callback())))
        .isZero();
    assertThat(client.received()).isEmpty();
  }

  @Test
  void should_stop_listening_to_a_child_when_the_gateway_disconnects_it_or_closes() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE, ATTRIBUTES);
    Device a = connectChild(fixture, client, "A", 2);
    // Named by telemetry, not connected: listened to all the same.
    client.send(publish("v1/gateway/telemetry", 3, "{\"B\":{\"t\":1}}"));
    client.runTasks();
    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBACK 3");
    Device b = fixture.registry.named("B").orElseThrow();
    // The gateway naming itself is not listened to a second time.
    connectChild(fixture, client, "gw", 4);
    assertThat(fixture.events.devicesListened()).isEqualTo(3);
    assertThat(fixture.meters.get("fieldline.mqtt.gateway.children").gauge().value()).isEqualTo(2);

    client.send(publish(DISCONNECT, 5, "{\"device\":\"A\"}"));
    assertThat(client.received()).containsExactly("PUBACK 5");
    assertThat(fixture.events.deliver(shared(a.id(), "target", "1"))).isZero();
    assertThat(fixture.events.deliver(shared(b.id(), "target", "2"))).isOne();
    assertThat(client.received())
        .containsExactly(
            "PUBLISH v1/gateway/attributes {\"device\":\"B\",\"data\":{\"target\":\"2\"}}");

    client.close();
    assertThat(fixture.events.devicesListened()).as("every listener closed").isZero();
    assertThat(fixture.meters.get("fieldline.mqtt.gateway.children").gauge().value()).isZero();
  }

  @Test
  void should_send_a_childs_rpc_and_answer_the_caller_when_the_gateway_replies() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_LEAST_ONCE, RPC);
    Device a = connectChild(fixture, client, "A", 2);
    RecordingRpcCallback callback = callback();

    assertThat(fixture.events.deliver(new RpcRequested(a.id(), rpc(a.id(), false), callback)))
        .isOne();
    assertThat(client.received())
        .containsExactly(
            "PUBLISH#1 v1/gateway/rpc"
                + " {\"device\":\"A\",\"data\":{\"id\":1,\"method\":\"setGpio\",\"params\":{\"pin\":4}}}");
    client.send(puback(1));
    client.runTasks();
    assertThat(callback.calls()).containsExactly("sent", "delivered");

    client.send(publish(RPC, 3, "{\"device\":\"A\",\"id\":1,\"data\":{\"pin\":4,\"on\":true}}"));

    assertThat(client.received()).containsExactly("PUBACK 3");
    assertThat(callback.calls()).last().isEqualTo("responded:{\"pin\":4,\"on\":true}");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "responded")).isOne();
    assertThat(fixture.count("fieldline.mqtt.gateway.messages", "topic", "rpc")).isOne();
  }

  @Test
  void should_settle_nothing_when_an_answer_names_another_child_or_an_unknown_id() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE, RPC);
    Device a = connectChild(fixture, client, "A", 2);
    connectChild(fixture, client, "B", 3);
    RecordingRpcCallback callback = callback();
    fixture.events.deliver(new RpcRequested(a.id(), rpc(a.id(), false), callback));
    client.received();

    client.send(publish(RPC, 4, "{\"device\":\"B\",\"id\":1,\"data\":\"wrong child\"}"));
    client.send(publish(RPC, 5, "{\"device\":\"A\",\"id\":9,\"data\":\"no such id\"}"));
    assertThat(client.received()).containsExactly("PUBACK 4", "PUBACK 5");
    assertThat(callback.calls()).containsExactly("sent", "delivered");
    assertThat(fixture.count("fieldline.mqtt.rpc", "outcome", "unknown_response")).isEqualTo(2);

    client.send(publish(RPC, 6, "{\"device\":\"A\",\"id\":\"1\",\"data\":\"ok\"}"));
    assertThat(client.received()).containsExactly("PUBACK 6");
    assertThat(callback.calls()).last().isEqualTo("responded:\"ok\"");
  }

  @Test
  void should_announce_each_child_when_the_gateway_subscribes_to_rpc_and_when_it_names_one() {
    GatewayFixture fixture = new GatewayFixture();
    List<DeviceId> announced = new CopyOnWriteArrayList<>();
    fixture.events.subscribeAll(
        event -> {
          if (event instanceof RpcSubscribed subscribed) {
            announced.add(subscribed.deviceId());
          }
          return false;
        });
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE);
    Device a = connectChild(fixture, client, "A", 2);
    assertThat(announced).as("not subscribed to v1/gateway/rpc yet").isEmpty();

    client.send(subscribe(3, MqttQoS.AT_LEAST_ONCE, RPC));
    assertThat(client.received()).containsExactly("SUBACK 3 [1]");
    assertThat(announced).containsExactly(a.id());

    Device b = connectChild(fixture, client, "B", 4);
    assertThat(announced).containsExactly(a.id(), b.id());
  }

  @Test
  void should_not_take_a_childs_rpc_beyond_the_gateways_pending_bound() {
    GatewayFixture fixture = new GatewayFixture("gateway.max-pending-rpc = 1");
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE, RPC);
    Device a = connectChild(fixture, client, "A", 2);
    Device b = connectChild(fixture, client, "B", 3);

    assertThat(fixture.events.deliver(new RpcRequested(a.id(), rpc(a.id(), false), callback())))
        .isOne();
    assertThat(fixture.events.deliver(new RpcRequested(b.id(), rpc(b.id(), false), callback())))
        .as("one request pending already: left to be offered again")
        .isZero();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "queue_full")).isOne();
  }

  @Test
  void should_answer_a_childs_attribute_request_in_the_shape_it_was_asked_in() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE, RESPONSE);
    Device a = connectChild(fixture, client, "A", 2);
    fixture.queries.put(
        a.id(), AttributeScope.CLIENT_SCOPE, new AttributeKvEntry(1L, KvEntry.of("fw", "1.2")));
    fixture.queries.put(
        a.id(), AttributeScope.SHARED_SCOPE, new AttributeKvEntry(1L, KvEntry.of("target", 21L)));
    fixture.queries.put(
        a.id(), AttributeScope.SHARED_SCOPE, new AttributeKvEntry(1L, KvEntry.of("mode", true)));

    client.send(publish(REQUEST, 3, "{\"id\":1,\"device\":\"A\",\"client\":true,\"key\":\"fw\"}"));
    client.send(
        publish(
            REQUEST,
            4,
            "{\"id\":2,\"device\":\"A\",\"client\":false,\"keys\":[\"target\",\"mode\",\"x\"]}"));
    client.send(
        publish(REQUEST, 5, "{\"id\":3,\"device\":\"A\",\"client\":[\"fw\"],\"shared\":[]}"));
    client.send(publish(REQUEST, 6, "{\"id\":4,\"device\":\"A\",\"client\":true,\"key\":\"x\"}"));

    String answer = "PUBLISH " + RESPONSE + " ";
    assertThat(client.received())
        .containsExactly(
            "PUBACK 3",
            answer + "{\"id\":1,\"device\":\"A\",\"value\":\"1.2\"}",
            "PUBACK 4",
            answer + "{\"id\":2,\"device\":\"A\",\"values\":{\"mode\":true,\"target\":21}}",
            "PUBACK 5",
            answer
                + "{\"id\":3,\"device\":\"A\",\"client\":{\"fw\":\"1.2\"},"
                + "\"shared\":{\"mode\":true,\"target\":21}}",
            "PUBACK 6",
            answer + "{\"id\":4,\"device\":\"A\"}");
    assertThat(fixture.count("fieldline.mqtt.attribute.requests", "outcome", "answered"))
        .isEqualTo(4);
  }

  @Test
  void should_create_and_link_the_child_when_a_request_names_one_the_session_does_not_hold() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE);

    client.send(
        publish(REQUEST, 2, "{\"id\":7,\"device\":\"New\",\"client\":false,\"key\":\"k\"}"));

    // The PUBACK waits for the creation, the answer for the read that follows it: either first.
    assertThat(client.received())
        .containsExactlyInAnyOrder(
            "PUBACK 2", "PUBLISH " + RESPONSE + " {\"id\":7,\"device\":\"New\"}");
    assertThat(fixture.registry.created()).containsExactly("New");
  }

  @Test
  void should_answer_an_error_when_the_childs_attributes_cannot_be_read() {
    GatewayFixture fixture = new GatewayFixture();
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE);
    connectChild(fixture, client, "A", 2);
    fixture.queries.failAttributes(new IllegalStateException("test: storage down"));

    client.send(publish(REQUEST, 3, "{\"id\":1,\"device\":\"A\",\"client\":true,\"key\":\"k\"}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 3",
            "PUBLISH "
                + RESPONSE
                + " {\"id\":1,\"device\":\"A\","
                + "\"error\":\"attributes could not be read, try again later\"}");
    assertThat(fixture.count("fieldline.mqtt.attribute.requests", "outcome", "failed")).isOne();
  }

  @Test
  void should_dead_letter_a_request_or_answer_it_does_not_understand() {
    GatewayFixture fixture = new GatewayFixture();
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = fixture.open();
    clients.add(client);
    client.connect("gw-token", true);

    client.send(publish(REQUEST, 1, "{\"id\":1,\"device\":\"A\",\"key\":\"k\"}"));
    client.send(publish(RPC, 2, "{\"device\":\"A\",\"id\":1}"));
    client.runTasks();

    assertThat(fixture.deadLetters.writes())
        .extracting(write -> write.deadLetter().reason())
        .containsExactly(
            "\"client\" must be true (client-side keys) or false (shared keys)",
            "an RPC answer has \"data\": the answer");
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().deviceId()).isEqualTo(gateway.id());
    fixture.deadLetters.writes().forEach(write -> write.done().complete(null));
    assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");
    assertThat(fixture.registry.created()).isEmpty();
  }

  @Test
  void should_pause_reading_when_a_gateway_requests_faster_than_its_rate() {
    GatewayFixture fixture =
        new GatewayFixture(
            "gateway.attribute-request-rate = 1", "gateway.attribute-request-burst = 1");
    GatewayFixture.Client client = gateway(fixture, MqttQoS.AT_MOST_ONCE);
    connectChild(fixture, client, "A", 2);
    assertThat(client.isReading()).isTrue();

    client.send(publish(REQUEST, 3, "{\"id\":1,\"device\":\"A\",\"client\":true,\"key\":\"k\"}"));

    // Answered (the read is over, so only the rate holds reading back).
    assertThat(client.received()).hasSize(2);
    assertThat(client.isReading()).as("paused until the rate allows the next request").isFalse();
    assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "attribute_requests"))
        .isPositive();
  }

  private static RecordingRpcCallback callback() {
    return new RecordingRpcCallback();
  }
}
