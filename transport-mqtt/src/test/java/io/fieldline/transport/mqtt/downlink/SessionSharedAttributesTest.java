package io.fieldline.transport.mqtt.downlink;

import static io.fieldline.transport.mqtt.testkit.SessionClient.puback;
import static io.fieldline.transport.mqtt.testkit.SessionClient.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.events.DeviceEvent.AttributesDeleted;
import io.fieldline.common.events.DeviceEvent.AttributesUpdated;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Shared-attribute pushes: the device's events reach a session subscribed to {@code
 * v1/devices/me/attributes}, in order, within the session's bound. Through the production pipeline
 * in an EmbeddedChannel, with the fixture's {@code LocalDeviceEvents} as the event path.
 */
class SessionSharedAttributesTest extends SessionHandlerTestBase {

  private static final String ATTRIBUTES = "v1/devices/me/attributes";

  static AttributesUpdated updated(DeviceId device, AttributeScope scope, KvEntry... values) {
    return new AttributesUpdated(
        device, scope, Arrays.stream(values).map(kv -> new AttributeKvEntry(1L, kv)).toList());
  }

  static double held(SessionFixture fixture) {
    return fixture.meters.get("fieldline.mqtt.downlink.held").gauge().value();
  }

  private SessionClient subscribed(SessionFixture fixture, MqttQoS qos) {
    SessionClient client = connected(fixture);
    client.send(subscribe(1, ATTRIBUTES, qos));
    int granted = Math.min(qos.value(), 1);
    assertThat(client.received()).containsExactly("SUBACK 1 [" + granted + "]");
    return client;
  }

  @Test
  void should_push_shared_updates_and_deletes_in_order_to_a_subscribed_session() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_MOST_ONCE);

    int first =
        fixture.events.deliver(
            updated(
                device,
                AttributeScope.SHARED_SCOPE,
                KvEntry.of("target", 22.5),
                KvEntry.of("mode", "eco"),
                KvEntry.json("plan", "[1,2]")));
    int second =
        fixture.events.deliver(
            new AttributesDeleted(device, AttributeScope.SHARED_SCOPE, List.of("old", "older")));
    int third =
        fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("n", 7L)));

    assertThat(List.of(first, second, third)).containsOnly(1);
    assertThat(client.received())
        .containsExactly(
            "PUBLISH " + ATTRIBUTES + " {\"target\":22.5,\"mode\":\"eco\",\"plan\":[1,2]}",
            "PUBLISH " + ATTRIBUTES + " {\"deleted\":[\"old\",\"older\"]}",
            "PUBLISH " + ATTRIBUTES + " {\"n\":7}");
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "sent")).isEqualTo(3);
    assertThat(held(fixture)).isZero();
  }

  @Test
  void should_not_push_to_a_session_that_did_not_subscribe_to_attributes() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = connected(fixture);
    client.send(subscribe(1, "v1/devices/me/rpc/request/+", MqttQoS.AT_LEAST_ONCE));
    client.received();

    int taken =
        fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("a", 1L)));

    assertThat(taken).isZero();
    assertThat(client.received()).isEmpty();
  }

  @Test
  void should_not_push_client_or_server_scope_attributes() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_MOST_ONCE);

    int client1 =
        fixture.events.deliver(updated(device, AttributeScope.CLIENT_SCOPE, KvEntry.of("a", 1L)));
    int server =
        fixture.events.deliver(updated(device, AttributeScope.SERVER_SCOPE, KvEntry.of("b", 1L)));
    int deleted =
        fixture.events.deliver(
            new AttributesDeleted(device, AttributeScope.SERVER_SCOPE, List.of("b")));

    assertThat(List.of(client1, server, deleted)).containsOnly(0);
    assertThat(client.received()).isEmpty();
  }

  @Test
  void should_push_at_qos1_with_packet_ids_and_let_go_of_each_at_its_puback() {
    SessionFixture fixture = fixture();
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.EXACTLY_ONCE); // granted 1

    fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("a", 1L)));
    fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("b", true)));

    assertThat(client.received())
        .containsExactly(
            "PUBLISH#1 " + ATTRIBUTES + " {\"a\":1}", "PUBLISH#2 " + ATTRIBUTES + " {\"b\":true}");
    assertThat(held(fixture)).isEqualTo(2);
    client.send(puback(2), puback(1), puback(1)); // the repeated one is ignored
    assertThat(held(fixture)).isZero();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "acknowledged")).isEqualTo(2);
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_drop_and_count_pushes_beyond_the_sessions_bound_and_send_the_rest_in_turn() {
    SessionFixture fixture = fixture("downlink.max-queued = 3", "downlink.max-inflight = 1");
    DeviceId device = device(fixture).id();
    SessionClient client = subscribed(fixture, MqttQoS.AT_LEAST_ONCE);

    int[] taken = new int[5];
    for (int i = 0; i < taken.length; i++) {
      taken[i] =
          fixture.events.deliver(
              updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("v", (long) i)));
    }

    assertThat(taken).containsExactly(1, 1, 1, 0, 0);
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "queue_full")).isEqualTo(2);
    // One in flight (the window), two waiting: the session holds three.
    assertThat(client.received()).containsExactly("PUBLISH#1 " + ATTRIBUTES + " {\"v\":0}");
    assertThat(held(fixture)).isEqualTo(3);
    client.send(puback(1));
    assertThat(client.received()).containsExactly("PUBLISH#2 " + ATTRIBUTES + " {\"v\":1}");
    client.send(puback(2));
    assertThat(client.received()).containsExactly("PUBLISH#3 " + ATTRIBUTES + " {\"v\":2}");
  }

  @Test
  void should_bound_the_bytes_a_session_holds() {
    SessionFixture fixture =
        fixture("downlink.max-queued-bytes = 1 KiB", "downlink.max-inflight = 1");
    DeviceId device = device(fixture).id();
    subscribed(fixture, MqttQoS.AT_LEAST_ONCE);
    String big = "x".repeat(400);

    int first =
        fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("a", big)));
    int second =
        fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("b", big)));
    int third =
        fixture.events.deliver(updated(device, AttributeScope.SHARED_SCOPE, KvEntry.of("c", big)));

    assertThat(List.of(first, second, third)).containsExactly(1, 1, 0);
    assertThat(fixture.meters.get("fieldline.mqtt.downlink.held.bytes").gauge().value())
        .isLessThanOrEqualTo(1024);
  }
}
