package io.fieldline.transport.mqtt.gateway;

import static io.fieldline.transport.mqtt.gateway.GatewayFixture.publish;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fieldline.common.DeviceId;
import io.fieldline.common.StoreException;
import io.fieldline.common.device.Device;
import io.fieldline.common.device.GatewayLink;
import io.fieldline.common.kv.Ack;
import io.fieldline.common.kv.DeviceMessage;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.transport.mqtt.testkit.FakeDeviceInbox.Submission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway topics on a gateway's session, through the production pipeline in an EmbeddedChannel:
 * one PUBACK per message after every child's write, child creation and linking, the bounds and
 * their refusals, and retransmissions that store no second copy.
 */
class GatewaySessionTest {

  private static final String TELEMETRY = "v1/gateway/telemetry";
  private static final String ATTRIBUTES = "v1/gateway/attributes";
  private static final String CONNECT = "v1/gateway/connect";
  private static final String DISCONNECT = "v1/gateway/disconnect";

  private final List<GatewayFixture.Client> clients = new ArrayList<>();

  @AfterEach
  void closeClients() {
    clients.forEach(GatewayFixture.Client::close);
  }

  private GatewayFixture.Client connected(GatewayFixture fixture, String token) {
    return connected(fixture, token, true);
  }

  private GatewayFixture.Client connected(
      GatewayFixture fixture, String token, boolean cleanSession) {
    GatewayFixture.Client client = fixture.open();
    clients.add(client);
    assertThat(client.connect(token, cleanSession)).startsWith("CONNACK 0x00");
    return client;
  }

  private static Device child(GatewayFixture fixture, String name) {
    return fixture.registry.named(name).orElseThrow();
  }

  private static DeviceMessage.PostTelemetry telemetryOf(Submission submission) {
    return (DeviceMessage.PostTelemetry) submission.message();
  }

  @Test
  void should_send_one_puback_after_every_child_is_stored_when_a_message_names_many_children() {
    GatewayFixture fixture = new GatewayFixture();
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(
        publish(
            TELEMETRY,
            1,
            "{\"A\":[{\"ts\":1000,\"values\":{\"t\":1}}],\"B\":{\"t\":2},\"C\":[{\"t\":3}]}"));
    client.runTasks();

    List<Submission> submissions = fixture.gateway.submissions();
    assertThat(submissions).hasSize(3);
    assertThat(submissions)
        .extracting(s -> s.message().deviceId())
        .containsExactly(
            child(fixture, "A").id(), child(fixture, "B").id(), child(fixture, "C").id());
    assertThat(telemetryOf(submissions.get(0)).entries())
        .containsExactly(new TsKvEntry(1000, KvEntry.of("t", 1L)));
    for (String name : List.of("A", "B", "C")) {
      assertThat(GatewayLink.gatewayOf(child(fixture, name))).contains(gateway.id());
      assertThat(child(fixture, name).type()).isEqualTo("default");
    }

    submissions.get(2).store();
    submissions.get(0).store();
    assertThat(client.received()).as("one child not stored yet").isEmpty();
    submissions.get(1).store();
    assertThat(client.received()).containsExactly("PUBACK 1");
    assertThat(fixture.count("fieldline.mqtt.gateway.points", "topic", "telemetry")).isEqualTo(3);
    assertThat(fixture.count("fieldline.mqtt.gateway.child.creations")).isEqualTo(3);
    assertThat(fixture.count("fieldline.mqtt.gateway.messages", "topic", "telemetry")).isEqualTo(1);
  }

  @Test
  void should_close_without_puback_when_one_childs_write_fails() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"B\":{\"t\":2}}"));
    client.runTasks();
    fixture.gateway.submission(0).store();
    fixture.gateway.submission(1).outcome().complete(Ack.rejected(Ack.Reason.OVERLOADED, "test"));

    assertThat(client.received()).isEmpty();
    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.count("fieldline.mqtt.write.failures")).isEqualTo(1);
    assertThat(fixture.count("fieldline.mqtt.gateway.points", "topic", "telemetry")).isZero();
  }

  @Test
  void should_give_a_retransmission_the_first_copys_time_when_the_kept_session_resumes() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    String payload = "{\"A\":{\"t\":1},\"B\":[{\"ts\":5,\"values\":{\"u\":2}},{\"v\":3}]}";
    GatewayFixture.Client first = connected(fixture, "gw-token", false);
    first.send(publish(TELEMETRY, 7, payload));
    first.runTasks();
    long firstTime = telemetryOf(fixture.gateway.submission(0)).receivedAt();
    fixture.gateway.submission(0).store();
    fixture.gateway.submission(1).fail();
    assertThat(first.isOpen()).isFalse();
    // The retransmission must come later than the first copy for the test to tell them apart.
    await().atMost(Duration.ofSeconds(1)).until(() -> System.currentTimeMillis() > firstTime);

    GatewayFixture.Client second = connected(fixture, "gw-token", false);
    second.send(publish(TELEMETRY, 7, payload, true));
    second.runTasks();

    List<Submission> again = fixture.gateway.submissions().subList(2, 4);
    for (int i = 0; i < 2; i++) {
      assertThat(telemetryOf(again.get(i)).entries())
          .as("the same rows as the first copy's")
          .isEqualTo(telemetryOf(fixture.gateway.submission(i)).entries());
      assertThat(telemetryOf(again.get(i)).receivedAt()).isEqualTo(firstTime);
    }
    assertThat(telemetryOf(again.get(0)).entries())
        .extracting(TsKvEntry::ts)
        .containsOnly(firstTime);
    assertThat(fixture.count("fieldline.mqtt.gateway.timestamps.reused")).isEqualTo(1);
    again.forEach(Submission::store);
    assertThat(second.received()).containsExactly("PUBACK 7");

    // Acknowledged: the same packet id and payload, even marked DUP, is a new message now.
    second.send(publish(TELEMETRY, 7, payload, true));
    second.runTasks();
    assertThat(telemetryOf(fixture.gateway.submission(4)).receivedAt()).isGreaterThan(firstTime);
  }

  @Test
  void should_stamp_anew_when_a_publish_reuses_a_packet_id_without_dup() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client first = connected(fixture, "gw-token", false);
    first.send(publish(TELEMETRY, 3, "{\"A\":{\"t\":1}}"));
    first.runTasks();
    long firstTime = telemetryOf(fixture.gateway.submission(0)).receivedAt();
    fixture.gateway.submission(0).fail();
    assertThat(first.isOpen()).isFalse();
    await().atMost(Duration.ofSeconds(1)).until(() -> System.currentTimeMillis() > firstTime);

    GatewayFixture.Client second = connected(fixture, "gw-token", false);
    second.send(publish(TELEMETRY, 3, "{\"A\":{\"t\":1}}", false));
    second.runTasks();

    assertThat(telemetryOf(fixture.gateway.submission(1)).receivedAt()).isGreaterThan(firstTime);
  }

  @Test
  void should_create_the_child_with_its_type_and_link_it_when_a_gateway_connects_it() {
    GatewayFixture fixture = new GatewayFixture();
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(CONNECT, 1, "{\"device\":\"Thermo 1\",\"type\":\"thermometer\"}"));

    assertThat(client.received()).containsExactly("PUBACK 1");
    Device child = child(fixture, "Thermo 1");
    assertThat(child.type()).isEqualTo("thermometer");
    assertThat(GatewayLink.gatewayOf(child)).contains(gateway.id());
    assertThat(fixture.gateway.submissions()).isEmpty();

    // Known to the session now: its telemetry needs no registry call.
    int updates = fixture.registry.updates().size();
    client.send(publish(TELEMETRY, 2, "{\"Thermo 1\":{\"t\":20}}"));
    client.runTasks();
    assertThat(fixture.gateway.submission(0).message().deviceId()).isEqualTo(child.id());
    assertThat(fixture.registry.updates()).hasSize(updates);
    assertThat(fixture.registry.created()).containsExactly("Thermo 1");
  }

  @Test
  void should_store_client_attributes_of_each_child_when_published_to_gateway_attributes() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(ATTRIBUTES, 1, "{\"A\":{\"fw\":\"1.2\"},\"B\":{\"on\":true}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions())
        .extracting(Submission::message)
        .containsExactly(
            new DeviceMessage.PostAttributes(
                child(fixture, "A").id(),
                ((DeviceMessage.PostAttributes) fixture.gateway.submission(0).message())
                    .receivedAt(),
                List.of(KvEntry.of("fw", 1.2))),
            new DeviceMessage.PostAttributes(
                child(fixture, "B").id(),
                ((DeviceMessage.PostAttributes) fixture.gateway.submission(1).message())
                    .receivedAt(),
                List.of(KvEntry.of("on", true))));
    fixture.gateway.submissions().forEach(Submission::store);
    assertThat(client.received()).containsExactly("PUBACK 1");
  }

  @Test
  void should_refuse_the_device_another_creator_made_when_the_name_is_taken_on_create() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    fixture.registry.takeOnCreate("A");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions()).isEmpty();
    assertRefusedAsNotOwner(fixture, client);
    assertThat(child(fixture, "A").additionalInfoJson()).as("left as it was").isNull();
    assertThat(fixture.count("fieldline.mqtt.gateway.child.creations")).isZero();
  }

  @Test
  void should_refuse_a_device_another_gateway_owns_for_every_kind_of_message() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    DeviceId other = DeviceId.random();
    // A child of the other gateway from before owners were recorded: its last gateway owns it.
    fixture.registry.add(
        "A", "a-token", "{\"note\":\"x\",\"lastConnectedGateway\":\"" + other.value() + "\"}");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"New\":{\"t\":2}}"));
    client.send(publish(ATTRIBUTES, 2, "{\"A\":{\"on\":true}}"));
    client.send(publish(CONNECT, 3, "{\"device\":\"A\"}"));
    client.send(
        publish(
            "v1/gateway/attributes/request",
            4,
            "{\"id\":1,\"device\":\"A\",\"client\":false,\"key\":\"k\"}"));
    client.send(publish("v1/gateway/rpc", 5, "{\"device\":\"A\",\"id\":1,\"data\":{}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions())
        .as("nothing of any message, New's value neither")
        .isEmpty();
    assertThat(fixture.deadLetters.writes()).hasSize(5);
    fixture.deadLetters.writes().forEach(write -> write.done().complete(null));
    assertThat(client.received())
        .containsExactly("PUBACK 1", "PUBACK 2", "PUBACK 3", "PUBACK 4", "PUBACK 5");
    assertThat(client.isOpen()).isTrue();
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "not_owner")).isEqualTo(5);
    assertThat(GatewayLink.ownerOf(child(fixture, "A"))).contains(other);
    assertThat(fixture.registry.updates()).as("never taken over").isEmpty();
  }

  @Test
  void should_act_for_a_device_an_administrator_linked_and_keep_its_other_info() {
    GatewayFixture fixture = new GatewayFixture();
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    fixture.registry.add(
        "A", "a-token", "{\"note\":\"x\",\"ownerGateway\":\"" + gateway.id().value() + "\"}");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(CONNECT, 1, "{\"device\":\"A\"}"));

    assertThat(client.received()).containsExactly("PUBACK 1");
    Device child = child(fixture, "A");
    assertThat(GatewayLink.gatewayOf(child)).contains(gateway.id());
    assertThat(GatewayLink.ownerOf(child)).contains(gateway.id());
    assertThat(child.additionalInfoJson()).contains("\"note\":\"x\"");
    assertThat(child.accessToken()).isEqualTo("a-token");
  }

  @Test
  void should_adopt_a_device_no_gateway_owns_only_when_adoption_is_on() {
    GatewayFixture fixture = new GatewayFixture("gateway.adopt-existing-devices = true");
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    fixture.registry.add("A", "a-token", null);
    fixture.registry.add(
        "B", "b-token", "{\"ownerGateway\":\"" + DeviceId.random().value() + "\"}");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(CONNECT, 1, "{\"device\":\"A\"}"));
    client.send(publish(CONNECT, 2, "{\"device\":\"B\"}"));
    client.runTasks();
    fixture.deadLetters.writes().forEach(write -> write.done().complete(null));

    assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");
    assertThat(GatewayLink.ownerOf(child(fixture, "A"))).contains(gateway.id());
    assertThat(GatewayLink.ownerOf(child(fixture, "B"))).isNotEqualTo(Optional.of(gateway.id()));
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "not_owner")).isEqualTo(1);
  }

  @Test
  void should_refuse_another_gateway_when_a_gateway_names_one() {
    GatewayFixture fixture = new GatewayFixture("gateway.adopt-existing-devices = true");
    fixture.registry.gateway("gw", "gw-token");
    fixture.registry.gateway("gw2", "gw2-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"gw2\":{\"t\":1}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions()).isEmpty();
    assertThat(fixture.registry.updates()).isEmpty();
    assertRefusedAsNotOwner(fixture, client);
  }

  @Test
  void should_pause_reading_while_another_gateway_holds_the_nodes_only_creation_permit() {
    GatewayFixture fixture = new GatewayFixture("gateway.max-concurrent-creations = 1");
    fixture.registry.gateway("gw", "gw-token");
    fixture.registry.gateway("gw2", "gw2-token");
    fixture.registry.holdCreations();
    GatewayFixture.Client first = connected(fixture, "gw-token");
    GatewayFixture.Client second = connected(fixture, "gw2-token");

    first.send(publish(CONNECT, 1, "{\"device\":\"A\"}"));
    first.runTasks();
    second.send(publish(CONNECT, 1, "{\"device\":\"B\"}"));
    second.runTasks();

    assertThat(fixture.registry.bulkCreations()).containsExactly(List.of("A"));
    assertThat(first.isReading()).isTrue();
    assertThat(second.isReading()).as("waits for the permit without reading").isFalse();
    assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "gateway_creations"))
        .isEqualTo(1);

    fixture.registry.release(0);
    first.runTasks();
    second.runTasks();
    assertThat(fixture.registry.bulkCreations()).containsExactly(List.of("A"), List.of("B"));
    assertThat(second.isReading()).as("its turn: reading again").isTrue();
    fixture.registry.release(1);
    assertThat(first.received()).containsExactly("PUBACK 1");
    assertThat(second.received()).containsExactly("PUBACK 1");
  }

  private static void assertRefusedAsNotOwner(
      GatewayFixture fixture, GatewayFixture.Client client) {
    assertThat(fixture.deadLetters.writes()).hasSize(1);
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().reason())
        .contains("not created by this gateway nor linked to it");
    fixture.deadLetters.writes().get(0).done().complete(null);
    assertThat(client.received()).containsExactly("PUBACK 1");
    assertThat(client.isOpen()).isTrue();
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "not_owner")).isEqualTo(1);
  }

  @Test
  void should_create_the_children_found_missing_meanwhile_in_one_bulk_call_linked_at_once() {
    GatewayFixture fixture = new GatewayFixture();
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    fixture.registry.holdCreations();
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"B\":{\"t\":2},\"C\":{\"t\":3}}"));
    client.runTasks();
    assertThat(fixture.registry.bulkCreations())
        .as("the first name missing")
        .containsExactly(List.of("A"));

    fixture.registry.release(0);
    client.runTasks();
    assertThat(fixture.registry.bulkCreations())
        .as("one bulk call at a time; the next takes every name missing meanwhile")
        .containsExactly(List.of("A"), List.of("B", "C"));
    assertThat(fixture.gateway.submissions()).isEmpty();

    fixture.registry.release(1);
    fixture.registry.release(2);
    client.runTasks();
    assertThat(fixture.registry.created()).containsExactly("A", "B", "C");
    assertThat(fixture.gateway.submissions()).hasSize(3);
    for (String name : List.of("A", "B", "C")) {
      assertThat(GatewayLink.gatewayOf(child(fixture, name))).contains(gateway.id());
    }
    assertThat(fixture.registry.updates()).as("created linked: no link update").isEmpty();
    assertThat(fixture.count("fieldline.mqtt.gateway.child.creations")).isEqualTo(3);
  }

  @Test
  void should_create_a_name_once_when_asked_again_while_its_creation_waits() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    fixture.registry.holdCreations();
    GatewayFixture.Client client = connected(fixture, "gw-token");
    client.send(publish(CONNECT, 1, "{\"device\":\"A\"}"));
    client.runTasks();
    client.send(publish(CONNECT, 2, "{\"device\":\"B\"}"));
    client.runTasks();

    // B waits behind A's creation; the gateway lets it go and names it again meanwhile.
    client.send(publish(DISCONNECT, 3, "{\"device\":\"B\"}"));
    client.send(publish(CONNECT, 4, "{\"device\":\"B\"}"));
    client.runTasks();
    fixture.registry.release(0);
    client.runTasks();
    fixture.registry.release(1);
    client.runTasks();

    assertThat(fixture.registry.bulkCreations()).containsExactly(List.of("A"), List.of("B"));
    assertThat(fixture.registry.created()).containsExactly("A", "B");
    assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2", "PUBACK 3", "PUBACK 4");
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_submit_in_publish_order_when_an_earlier_message_still_resolves_a_child() {
    GatewayFixture fixture = new GatewayFixture();
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    fixture.registry.add("B", "b-token", "{\"ownerGateway\":\"" + gateway.id().value() + "\"}");
    fixture.registry.holdCreations();
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"B\":{\"t\":1}}"));
    client.send(publish(TELEMETRY, 2, "{\"B\":{\"t\":2}}"));
    client.runTasks();
    assertThat(fixture.gateway.submissions()).as("both wait for A's creation").isEmpty();

    fixture.registry.release(0);
    client.runTasks();

    assertThat(fixture.gateway.submissions())
        .extracting(s -> telemetryOf(s).entries().get(0).kv())
        .containsExactly(KvEntry.of("t", 1L), KvEntry.of("t", 1L), KvEntry.of("t", 2L));
    fixture.gateway.submissions().forEach(Submission::store);
    assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");
  }

  @Test
  void should_close_without_puback_when_a_child_cannot_be_created() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    fixture.registry.failCreations(
        new StoreException(StoreException.Kind.UNAVAILABLE, "test: registry down"));
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1}}"));

    assertThat(client.received()).isEmpty();
    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.gateway.submissions()).isEmpty();
  }

  @Test
  void should_dead_letter_and_ack_when_a_message_names_more_devices_than_allowed() {
    GatewayFixture fixture = new GatewayFixture("gateway.max-devices-per-message = 2");
    Device gateway = fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"B\":{\"t\":2},\"C\":{\"t\":3}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions()).isEmpty();
    assertThat(fixture.registry.created()).isEmpty();
    assertThat(fixture.deadLetters.writes()).hasSize(1);
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().deviceId()).isEqualTo(gateway.id());
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().reason())
        .isEqualTo("more than 2 devices in one gateway message");
    fixture.deadLetters.writes().get(0).done().complete(null);
    assertThat(client.received()).containsExactly("PUBACK 1");
    assertThat(client.isOpen()).isTrue();
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "too_many_devices"))
        .isEqualTo(1);
    assertThat(fixture.count("fieldline.mqtt.deadletters")).isEqualTo(1);
  }

  @Test
  void should_close_when_a_message_is_refused_under_the_close_policy() {
    GatewayFixture fixture =
        new GatewayFixture("gateway.max-devices-per-message = 1", "invalid-payload = close");
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"B\":{\"t\":2}}"));

    assertThat(client.received()).isEmpty();
    assertThat(client.isOpen()).isFalse();
    assertThat(fixture.deadLetters.writes()).isEmpty();
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "too_many_devices"))
        .isEqualTo(1);
  }

  @Test
  void should_refuse_a_new_child_beyond_max_children_until_the_gateway_disconnects_one() {
    GatewayFixture fixture = new GatewayFixture("gateway.max-children = 2");
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");
    client.send(publish(CONNECT, 1, "{\"device\":\"A\"}"));
    client.send(publish(TELEMETRY, 2, "{\"B\":{\"t\":1}}"));
    client.runTasks();
    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBACK 1", "PUBACK 2");

    client.send(publish(TELEMETRY, 3, "{\"A\":{\"t\":1},\"C\":{\"t\":1}}"));
    client.runTasks();
    assertThat(fixture.deadLetters.writes()).hasSize(1);
    fixture.deadLetters.writes().get(0).done().complete(null);
    assertThat(client.received()).containsExactly("PUBACK 3");
    assertThat(fixture.registry.named("C")).isEmpty();
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "too_many_children"))
        .isEqualTo(1);

    client.send(publish(DISCONNECT, 4, "{\"device\":\"A\"}"));
    client.send(publish(TELEMETRY, 5, "{\"C\":{\"t\":1}}"));
    client.runTasks();
    fixture.gateway.submission(1).store();
    assertThat(client.received()).containsExactly("PUBACK 4", "PUBACK 5");
    assertThat(fixture.registry.named("C")).isPresent();
  }

  @Test
  void
      should_dead_letter_an_invalid_gateway_payload_naming_the_device_when_policy_is_dead_letter() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1},\"B\":{\"ts\":\"x\",\"values\":{}}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions()).isEmpty();
    assertThat(fixture.registry.created()).isEmpty();
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().reason())
        .isEqualTo("device 'B': ts must be an integer of epoch milliseconds");
    fixture.deadLetters.writes().get(0).done().complete(null);
    assertThat(client.received()).containsExactly("PUBACK 1");
  }

  @Test
  void
      should_dead_letter_as_unknown_topic_when_a_device_that_is_not_a_gateway_uses_gateway_topics() {
    GatewayFixture fixture = new GatewayFixture();
    Device plain = fixture.registry.add("plain", "plain-token", "{\"gateway\":false}");
    GatewayFixture.Client client = connected(fixture, "plain-token");

    client.send(publish(TELEMETRY, 1, "{\"A\":{\"t\":1}}"));
    client.runTasks();

    assertThat(fixture.gateway.submissions()).isEmpty();
    assertThat(fixture.registry.created()).isEmpty();
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().deviceId()).isEqualTo(plain.id());
    assertThat(fixture.deadLetters.writes().get(0).deadLetter().reason()).contains("not a gateway");
    fixture.deadLetters.writes().get(0).done().complete(null);
    assertThat(client.received()).containsExactly("PUBACK 1");
    assertThat(fixture.count("fieldline.mqtt.gateway.refused", "reason", "not_gateway"))
        .isEqualTo(1);
    assertThat(fixture.count("fieldline.mqtt.rejected", "reason", "topic")).isEqualTo(1);
  }

  @Test
  void should_dead_letter_gateway_topics_not_served_as_unknown_topics() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(
        publish("v1/gateway/claim", 1, "{\"A\":{\"secretKey\":\"s\",\"durationMs\":60000}}"));
    client.runTasks();

    assertThat(fixture.deadLetters.writes().get(0).deadLetter().reason())
        .startsWith("unknown topic");
  }

  @Test
  void should_ack_a_message_with_no_device_at_once_when_it_is_an_empty_object() {
    GatewayFixture fixture = new GatewayFixture();
    fixture.registry.gateway("gw", "gw-token");
    GatewayFixture.Client client = connected(fixture, "gw-token");

    client.send(publish(TELEMETRY, 1, "{}"));

    assertThat(client.received()).containsExactly("PUBACK 1");
    assertThat(fixture.gateway.submissions()).isEmpty();
  }
}
