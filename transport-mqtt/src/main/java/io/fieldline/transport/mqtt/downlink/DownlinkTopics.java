package io.fieldline.transport.mqtt.downlink;

import io.fieldline.transport.mqtt.session.SessionState;

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

  private DownlinkTopics() {}

  /**
   * The QoS the session's messages for {@code filter} are sent at: what was granted, at most 1, or
   * -1 when the session did not subscribe to it. Any thread.
   */
  public static int qos(SessionState session, String filter) {
    Integer granted = session.subscriptions().get(filter);
    return granted == null ? -1 : Math.min(granted, 1);
  }
}
