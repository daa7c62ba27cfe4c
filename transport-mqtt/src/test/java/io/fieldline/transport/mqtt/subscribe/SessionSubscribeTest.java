package io.fieldline.transport.mqtt.subscribe;

import static org.assertj.core.api.Assertions.assertThat;

import io.fieldline.transport.mqtt.testkit.SessionClient;
import io.fieldline.transport.mqtt.testkit.SessionHandlerTestBase;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttQoS;
import org.junit.jupiter.api.Test;

/**
 * SUBSCRIBE and UNSUBSCRIBE: the device API's filters granted at most QoS 1, others refused. Driven
 * through the production pipeline in an EmbeddedChannel.
 */
class SessionSubscribeTest extends SessionHandlerTestBase {

  @Test
  void should_grant_at_most_qos1_for_allowed_filters_and_0x80_for_others() {
    SessionClient client = connected(fixture());

    client.send(
        MqttMessageBuilders.subscribe()
            .messageId(3)
            .addSubscription(MqttQoS.EXACTLY_ONCE, "v1/devices/me/rpc/request/+")
            .addSubscription(MqttQoS.AT_MOST_ONCE, "v1/devices/me/attributes")
            .addSubscription(MqttQoS.AT_LEAST_ONCE, "v1/devices/me/attributes/response/+")
            .addSubscription(MqttQoS.AT_LEAST_ONCE, "#")
            .build());

    assertThat(client.received()).containsExactly("SUBACK 3 [1, 0, 1, 128]");
    assertThat(client.isOpen()).isTrue();
  }

  @Test
  void should_unsuback_when_client_unsubscribes() {
    SessionClient client = connected(fixture());

    client.send(
        MqttMessageBuilders.unsubscribe()
            .messageId(4)
            .addTopicFilter("v1/devices/me/attributes")
            .build());

    assertThat(client.received()).containsExactly("UNSUBACK 4");
  }
}
