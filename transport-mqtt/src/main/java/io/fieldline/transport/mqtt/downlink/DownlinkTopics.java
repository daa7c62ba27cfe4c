package io.fieldline.transport.mqtt.downlink;

import io.fieldline.transport.mqtt.session.SessionState;
import java.util.List;

/**
 * The device API's topics the server publishes on, and the subscriptions that ask for them.
 * Stateless.
 */
public final class DownlinkTopics {

  /** Shared-attribute pushes; also the filter a device subscribes to for them. */
  public static final String ATTRIBUTES = "v1/devices/me/attributes";

  /** The filter of the answers to attribute requests. */
  public static final String ATTRIBUTES_RESPONSE_FILTER = "v1/devices/me/attributes/response/+";

  /** Where the answer to {@code v1/devices/me/attributes/request/{id}} goes, followed by the id. */
  public static final String ATTRIBUTES_RESPONSE_PREFIX = "v1/devices/me/attributes/response/";

  /** The filter of server-side RPC requests. */
  public static final String RPC_REQUEST_FILTER = "v1/devices/me/rpc/request/+";

  /** Where server-side RPC request {@code n} goes, followed by {@code n}. */
  public static final String RPC_REQUEST_PREFIX = "v1/devices/me/rpc/request/";

  /**
   * A gateway's children's shared-attribute pushes; also the filter a gateway subscribes to for
   * them (and the topic it publishes its children's client attributes on).
   */
  public static final String GATEWAY_ATTRIBUTES = "v1/gateway/attributes";

  /** The answers to a gateway's attribute requests; also the filter that asks for them. */
  public static final String GATEWAY_ATTRIBUTES_RESPONSE = "v1/gateway/attributes/response";

  /**
   * Server-side RPC requests to a gateway's children; also the filter that asks for them (and the
   * topic the gateway publishes their answers on).
   */
  public static final String GATEWAY_RPC = "v1/gateway/rpc";

  /** Where chunk {@code n} of firmware download {@code id} goes: this, {@code id/chunk/n}. */
  public static final String FIRMWARE_RESPONSE_PREFIX = "v2/fw/response/";

  /** Where a refused firmware chunk request is answered (ThingsBoard's topic). */
  public static final String FIRMWARE_ERROR = "v2/fw/error";

  /**
   * The filters under which a session gets firmware chunks. {@code v2/fw/response/+/chunk/+} is
   * ThingsBoard's; {@code v2/fw/response/+} is what ThingsBoard's own Python SDK subscribes to, and
   * although by MQTT's matching rules (MQTT 3.1.1 §4.7.1.3: {@code +} is one level) it does not
   * match the multi-level {@code v2/fw/response/{id}/chunk/{n}}, the SDK expects its chunks there,
   * as ThingsBoard sends them whatever the subscription: a session subscribed to it gets them (the
   * one exception to MQTT matching in this server, see docs/mqtt-api.md).
   */
  public static final List<String> FIRMWARE_RESPONSE_FILTERS =
      List.of(
          "v2/fw/response/+/chunk/+",
          "v2/fw/response/+",
          "v2/fw/response/#",
          "v2/fw/response/+/chunk/#");

  private DownlinkTopics() {}

  /**
   * The QoS the session's messages for {@code filter} are sent at: what was granted, at most 1, or
   * -1 when the session did not subscribe to it. Any thread.
   */
  public static int qos(SessionState session, String filter) {
    Integer granted = session.subscriptions().get(filter);
    return granted == null ? -1 : Math.min(granted, 1);
  }

  /**
   * The QoS firmware chunks go at: the highest granted to any of {@link #FIRMWARE_RESPONSE_FILTERS}
   * (at most 1), or 1 when the session subscribed to none, as ThingsBoard sends a topic no
   * subscription matches at QoS 1. Any thread.
   */
  public static int firmwareQos(SessionState session) {
    int qos = -1;
    for (String filter : FIRMWARE_RESPONSE_FILTERS) {
      qos = Math.max(qos, qos(session, filter));
    }
    return qos < 0 ? 1 : qos;
  }

  /**
   * The QoS firmware errors go at: what was granted to {@link #FIRMWARE_ERROR} (at most 1), or 1
   * without that subscription (ThingsBoard's default). Any thread.
   */
  public static int firmwareErrorQos(SessionState session) {
    int qos = qos(session, FIRMWARE_ERROR);
    return qos < 0 ? 1 : qos;
  }
}
