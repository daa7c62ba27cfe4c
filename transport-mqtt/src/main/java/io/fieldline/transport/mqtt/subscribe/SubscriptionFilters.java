package io.fieldline.transport.mqtt.subscribe;

import io.fieldline.transport.mqtt.downlink.DownlinkTopics;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.util.HashSet;
import java.util.Set;

/**
 * The topic filters a device may subscribe to (ThingsBoard device API, firmware downloads included:
 * {@link DownlinkTopics#FIRMWARE_RESPONSE_FILTERS} and {@link DownlinkTopics#FIRMWARE_ERROR}). Any
 * other filter is refused with SUBACK 0x80; the granted QoS is at most 1. Stateless.
 */
final class SubscriptionFilters {

  private static final Set<String> ALLOWED = allowed();

  private SubscriptionFilters() {}

  private static Set<String> allowed() {
    Set<String> filters =
        new HashSet<>(
            Set.of(
                "v1/devices/me/attributes",
                "v1/devices/me/attributes/response/+",
                "v1/devices/me/rpc/request/+",
                "v1/devices/me/rpc/response/+",
                // ThingsBoard's gateway API: children's shared attributes, attribute answers, RPC.
                DownlinkTopics.GATEWAY_ATTRIBUTES,
                DownlinkTopics.GATEWAY_ATTRIBUTES_RESPONSE,
                DownlinkTopics.GATEWAY_RPC,
                DownlinkTopics.FIRMWARE_ERROR));
    filters.addAll(DownlinkTopics.FIRMWARE_RESPONSE_FILTERS);
    return Set.copyOf(filters);
  }

  static boolean isAllowed(String filter) {
    return ALLOWED.contains(filter);
  }

  /** MQTT 3.1.1 §3.9.3: the server may grant a lower QoS than requested; we grant at most 1. */
  static MqttQoS grantedQos(MqttQoS requested) {
    return requested == MqttQoS.AT_MOST_ONCE ? MqttQoS.AT_MOST_ONCE : MqttQoS.AT_LEAST_ONCE;
  }
}
