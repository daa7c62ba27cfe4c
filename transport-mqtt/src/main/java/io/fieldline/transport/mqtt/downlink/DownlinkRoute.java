package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.kv.AttributeKvEntry;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Where the events of one device a session listens to go, and in which shapes (ThingsBoard's):
 *
 * <ul>
 *   <li>{@linkplain #device() the session's own device}: pushes {@code {"k": v}} on {@code
 *       v1/devices/me/attributes}, RPC requests {@code {"method", "params"}} on {@code
 *       v1/devices/me/rpc/request/{n}};
 *   <li>{@linkplain #child a child of a gateway's session}: pushes {@code {"device": name, "data":
 *       {"k": v}}} on {@code v1/gateway/attributes}, RPC requests {@code {"device": name, "data":
 *       {"id": n, "method", "params"}}} on {@code v1/gateway/rpc}.
 * </ul>
 *
 * Each is sent only if the session subscribed to its filter (the topic itself, or {@code
 * v1/devices/me/rpc/request/+}). Immutable.
 */
final class DownlinkRoute {

  private static final DownlinkRoute DEVICE = new DownlinkRoute(null);

  private final @Nullable String child;

  private DownlinkRoute(@Nullable String child) {
    this.child = child;
  }

  /** The session's own device. */
  static DownlinkRoute device() {
    return DEVICE;
  }

  /** The child named {@code name} (as its gateway knows it) of a gateway's session. */
  static DownlinkRoute child(String name) {
    return new DownlinkRoute(Objects.requireNonNull(name, "name"));
  }

  /** The filter that asks for shared-attribute pushes; also their topic. */
  String attributesTopic() {
    return child == null ? DownlinkTopics.ATTRIBUTES : DownlinkTopics.GATEWAY_ATTRIBUTES;
  }

  byte[] updated(List<AttributeKvEntry> entries) {
    return child == null
        ? DownlinkPayloads.updated(entries)
        : DownlinkPayloads.childUpdated(child, entries);
  }

  byte[] deleted(List<String> keys) {
    return child == null
        ? DownlinkPayloads.deleted(keys)
        : DownlinkPayloads.childDeleted(child, keys);
  }

  /** The filter that asks for server-side RPC requests. */
  String rpcFilter() {
    return child == null ? DownlinkTopics.RPC_REQUEST_FILTER : DownlinkTopics.GATEWAY_RPC;
  }

  /** The topic of request {@code n}. */
  String rpcTopic(int requestId) {
    return child == null
        ? DownlinkTopics.RPC_REQUEST_PREFIX + requestId
        : DownlinkTopics.GATEWAY_RPC;
  }

  byte[] rpcRequest(int requestId, String method, String paramsJson) {
    return child == null
        ? DownlinkPayloads.rpcRequest(method, paramsJson)
        : DownlinkPayloads.childRpcRequest(child, requestId, method, paramsJson);
  }
}
