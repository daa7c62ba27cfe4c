package io.fieldline.transport.mqtt.publish;

import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.subscribe;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.common.DeviceId;
import io.fieldline.common.kv.AttributeKvEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.transport.mqtt.testkit.FakeTelemetryQueries;
import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Attribute requests ({@code v1/devices/me/attributes/request/{id}}) answered from the attribute
 * reads, with ThingsBoard's semantics, through the production pipeline in an EmbeddedChannel.
 */
class SessionAttributeRequestTest extends SessionHandlerTestBase {

  private static final String REQUEST = "v1/devices/me/attributes/request/";
  private static final String RESPONSE = "PUBLISH v1/devices/me/attributes/response/";

  /** A fixture whose device has client, shared and server attributes of every type. */
  private SessionFixture withAttributes(String... overrides) {
    SessionFixture fixture = fixture(overrides);
    DeviceId device = device(fixture).id();
    FakeTelemetryQueries queries = fixture.queries;
    queries.put(device, AttributeScope.CLIENT_SCOPE, entry(KvEntry.of("fw", "1.2.0")));
    queries.put(device, AttributeScope.CLIENT_SCOPE, entry(KvEntry.of("boots", 42L)));
    queries.put(device, AttributeScope.SHARED_SCOPE, entry(KvEntry.of("target", 21.5)));
    queries.put(device, AttributeScope.SHARED_SCOPE, entry(KvEntry.of("enabled", true)));
    queries.put(
        device, AttributeScope.SHARED_SCOPE, entry(KvEntry.json("schedule", "{\"on\":[8,18]}")));
    queries.put(device, AttributeScope.SERVER_SCOPE, entry(KvEntry.of("secret", "s")));
    return fixture;
  }

  private static AttributeKvEntry entry(KvEntry kv) {
    return new AttributeKvEntry(1_000L, kv);
  }

  private static MqttMessage request(String id, String payload) {
    return publish(REQUEST + id, MqttQoS.AT_LEAST_ONCE, 1, payload);
  }

  @Test
  void should_answer_the_named_keys_of_both_scopes_as_typed_json_in_either_key_form() {
    SessionFixture fixture = withAttributes();
    SessionClient client = connected(fixture);

    client.send(request("7", "{\"clientKeys\":\"fw, boots\",\"sharedKeys\":[\"schedule\"]}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            RESPONSE
                + "7 {\"client\":{\"boots\":42,\"fw\":\"1.2.0\"},"
                + "\"shared\":{\"schedule\":{\"on\":[8,18]}}}");
    assertThat(fixture.queries.reads())
        .extracting(FakeTelemetryQueries.Read::keys)
        .containsExactly(Optional.of(Set.of("fw", "boots")), Optional.of(Set.of("schedule")));
    assertThat(fixture.count("fieldline.mqtt.attribute.requests", "outcome", "answered"))
        .isEqualTo(1);
  }

  @Test
  void should_read_only_the_scope_whose_keys_are_given() {
    SessionFixture fixture = withAttributes();
    SessionClient client = connected(fixture);

    client.send(request("1", "{\"sharedKeys\":\"target,enabled\"}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1", RESPONSE + "1 {\"shared\":{\"enabled\":true,\"target\":21.5}}");
    assertThat(fixture.queries.reads())
        .extracting(FakeTelemetryQueries.Read::scope)
        .containsExactly(AttributeScope.SHARED_SCOPE);
  }

  @Test
  void should_answer_every_client_and_shared_attribute_when_no_keys_are_given() {
    SessionFixture fixture = withAttributes();
    SessionClient client = connected(fixture);

    client.send(request("2", "{}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            RESPONSE
                + "2 {\"client\":{\"boots\":42,\"fw\":\"1.2.0\"},"
                + "\"shared\":{\"enabled\":true,\"schedule\":{\"on\":[8,18]},\"target\":21.5}}");
  }

  @Test
  void should_leave_out_a_scope_with_nothing_found() {
    SessionFixture fixture = withAttributes();
    SessionClient client = connected(fixture);

    client.send(request("3", "{\"clientKeys\":\"fw\",\"sharedKeys\":\"nothing,secret\"}"));
    client.send(request("4", "{\"clientKeys\":\"nope\"}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            RESPONSE + "3 {\"client\":{\"fw\":\"1.2.0\"}}",
            "PUBACK 1",
            RESPONSE + "4 {}");
  }

  @Test
  void should_answer_an_error_when_the_request_is_not_understood() {
    SessionFixture fixture = withAttributes();
    SessionClient client = connected(fixture);

    client.send(request("5", "[1,2]"));
    client.send(request("6", "{\"clientKeys\":[1]}"));

    // Answered at once, so ahead of the request's own PUBACK.
    assertThat(client.received())
        .containsExactly(
            RESPONSE + "5 {\"error\":\"request must be a JSON object\"}",
            "PUBACK 1",
            RESPONSE + "6 {\"error\":\"clientKeys must be a string or an array of strings\"}",
            "PUBACK 1");
    assertThat(fixture.queries.reads()).isEmpty();
    assertThat(fixture.count("fieldline.mqtt.attribute.requests", "outcome", "invalid"))
        .isEqualTo(2);
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_answer_an_error_when_the_read_fails() {
    SessionFixture fixture = withAttributes();
    fixture.queries.failAttributes(new IllegalStateException("test: storage down"));
    SessionClient client = connected(fixture);

    client.send(request("8", "{\"clientKeys\":\"fw\"}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            RESPONSE + "8 {\"error\":\"attributes could not be read, try again later\"}");
    assertThat(fixture.count("fieldline.mqtt.attribute.requests", "outcome", "failed"))
        .isEqualTo(1);
  }

  @Test
  void should_answer_at_the_qos_of_the_response_subscription() {
    SessionFixture fixture = withAttributes();
    SessionClient client = connected(fixture);
    client.send(subscribe(2, "v1/devices/me/attributes/response/+", MqttQoS.AT_LEAST_ONCE));
    assertThat(client.received()).containsExactly("SUBACK 2 [1]");

    client.send(request("9", "{\"clientKeys\":\"boots\"}"));

    assertThat(client.received())
        .containsExactly(
            "PUBACK 1",
            "PUBLISH#1 v1/devices/me/attributes/response/9 {\"client\":{\"boots\":42}}");
    client.send(SessionClient.puback(1));
    client.runTasks();
    assertThat(fixture.count("fieldline.mqtt.downlink", "outcome", "acknowledged")).isEqualTo(1);
  }

  @Test
  void should_answer_every_request_and_pace_reading_beyond_the_rate() {
    SessionFixture fixture =
        withAttributes("attribute-request-rate = 1", "attribute-request-burst = 2");
    SessionClient client = connected(fixture);

    client.send(
        publish(REQUEST + "1", MqttQoS.AT_MOST_ONCE, 0, "{}"),
        publish(REQUEST + "2", MqttQoS.AT_MOST_ONCE, 0, "{}"),
        publish(REQUEST + "3", MqttQoS.AT_MOST_ONCE, 0, "{}"));

    assertThat(client.received()).hasSize(2);
    assertThat(client.isReading()).isFalse();
    assertThat(fixture.count("fieldline.mqtt.backpressure.pauses", "cause", "attribute_requests"))
        .isPositive();
    client.advanceTime(1_000);
    assertThat(client.received()).singleElement().asString().startsWith(RESPONSE + "3 ");
    client.advanceTime(1_000);
    assertThat(client.isReading()).isTrue();
  }
}
