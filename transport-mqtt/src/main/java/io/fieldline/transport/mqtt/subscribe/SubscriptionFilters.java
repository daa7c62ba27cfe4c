package io.fieldline.transport.mqtt.subscribe;

import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.Set;

/**
 * The topic filters a device may subscribe to (ThingsBoard device API). Any other filter is refused
 * with SUBACK 0x80; the granted QoS is at most 1. Stateless.
 */
final class SubscriptionFilters {

  private static final Set<String> ALLOWED =
      Set.of(
          "v1/devices/me/attributes",
          "v1/devices/me/attributes/response/+",
          "v1/devices/me/rpc/request/+",
          "v1/devices/me/rpc/response/+",
          // ThingsBoard's gateway API: children's shared attributes, attribute answers, RPC.
          "v1/gateway/attributes",
          "v1/gateway/attributes/response",
          "v1/gateway/rpc");

  private SubscriptionFilters() {}

  static boolean isAllowed(String filter) {
    return ALLOWED.contains(filter);
  }

  /** MQTT 3.1.1 §3.9.3: the server may grant a lower QoS than requested; we grant at most 1. */
  static MqttQoS grantedQos(MqttQoS requested) {
    return requested == MqttQoS.AT_MOST_ONCE ? MqttQoS.AT_MOST_ONCE : MqttQoS.AT_LEAST_ONCE;
  }
}
