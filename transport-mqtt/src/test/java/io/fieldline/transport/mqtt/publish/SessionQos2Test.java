package io.fieldline.transport.mqtt.publish;

import static io.fieldline.transport.mqtt.testkit.SessionClient.TELEMETRY;
import static io.fieldline.transport.mqtt.testkit.SessionClient.connectMessage;
import static io.fieldline.transport.mqtt.testkit.SessionClient.publish;
import static io.fieldline.transport.mqtt.testkit.SessionClient.pubrel;
import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionFixture;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttQoS;
import org.junit.jupiter.api.Test;

/**
 * QoS 2 on the PUBLISH path: PUBREC only after the write, PUBREL → PUBCOMP, and duplicates within a
 * session not stored twice. Driven through the production pipeline in an EmbeddedChannel.
 */
class SessionQos2Test extends SessionHandlerTestBase {

  @Test
  void should_pubrec_after_store_and_pubcomp_after_pubrel() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);

    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));
    assertThat(client.received()).isEmpty();

    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBREC 7");

    client.send(pubrel(7));
    assertThat(client.received()).containsExactly("PUBCOMP 7");
    assertThat(fixture.count("fieldline.mqtt.pubrec.sent")).isEqualTo(1);
  }

  @Test
  void should_pubrec_without_resubmitting_when_duplicate_arrives_before_pubrel() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);
    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));
    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBREC 7");

    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));

    assertThat(fixture.gateway.submissions()).hasSize(1);
    assertThat(client.received()).containsExactly("PUBREC 7");
  }

  @Test
  void should_not_resubmit_when_duplicate_arrives_while_first_is_still_being_stored() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);
    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 8, "{\"a\":1}"));

    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 8, "{\"a\":1}"));
    assertThat(fixture.gateway.submissions()).hasSize(1);
    assertThat(client.received()).as("not PUBREC'd before the first copy is stored").isEmpty();

    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBREC 8", "PUBREC 8");
  }

  @Test
  void should_store_again_when_packet_id_is_reused_after_pubrel() {
    SessionFixture fixture = fixture();
    SessionClient client = connected(fixture);
    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":1}"));
    fixture.gateway.submission(0).store();
    assertThat(client.received()).containsExactly("PUBREC 7");
    client.send(pubrel(7));
    assertThat(client.received()).containsExactly("PUBCOMP 7");

    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 7, "{\"a\":2}"));

    assertThat(fixture.gateway.submissions()).hasSize(2);
  }

  @Test
  void should_resubmit_after_reconnect_when_first_copy_was_never_stored() {
    SessionFixture fixture = fixture();
    SessionClient first = open(fixture);
    first.send(connectMessage(TOKEN, false, 60));
    assertThat(first.received()).containsExactly("CONNACK 0x00");
    first.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 9, "{\"a\":1}"));
    fixture.gateway.submission(0).fail();
    assertThat(first.isOpen()).isFalse();

    SessionClient second = open(fixture);
    second.send(connectMessage(TOKEN, false, 60));
    assertThat(second.received()).containsExactly("CONNACK 0x00 session-present");
    second.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 9, "{\"a\":1}"));

    assertThat(fixture.gateway.submissions()).as("the failed copy must be stored again").hasSize(2);
  }

  @Test
  void should_forget_the_oldest_id_when_ids_awaiting_pubrel_exceed_the_bound() {
    SessionFixture fixture = fixture("max-awaiting-release = 2");
    SessionClient client = connected(fixture);
    client.send(
        publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 1, "{\"a\":1}"),
        publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 2, "{\"a\":2}"),
        publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 3, "{\"a\":3}"));
    for (int i = 0; i < 3; i++) {
      fixture.gateway.submission(i).store();
    }

    // Every message stored and acknowledged; the session keeps only the two newest ids.
    assertThat(client.received()).containsExactly("PUBREC 1", "PUBREC 2", "PUBREC 3");
    assertThat(client.isOpen()).isTrue();
    assertThat(fixture.count("fieldline.mqtt.qos2.forgotten")).isEqualTo(1);

    // A redelivered id still held is not stored twice; PUBREL of the forgotten one is completed.
    client.send(publish(TELEMETRY, MqttQoS.EXACTLY_ONCE, 3, "{\"a\":3}"), pubrel(1));
    assertThat(client.received()).containsExactly("PUBREC 3", "PUBCOMP 1");
    assertThat(fixture.gateway.submissions()).hasSize(3);
  }
}
