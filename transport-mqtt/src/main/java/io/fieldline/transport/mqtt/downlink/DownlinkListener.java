package io.fieldline.transport.mqtt.downlink;

import io.fieldline.common.events.DeviceEvent;
import io.fieldline.common.events.DeviceEvent.AttributesDeleted;
import io.fieldline.common.events.DeviceEvent.AttributesUpdated;
import io.fieldline.common.events.DeviceEvent.RpcRequested;
import io.fieldline.common.events.DeviceEventListener;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.MqttMetrics;
import io.fieldline.transport.mqtt.MqttMetrics.DownlinkOutcome;
import io.fieldline.transport.mqtt.MqttMetrics.RpcOutcome;
import io.fieldline.transport.mqtt.MqttTransportConfig;
import io.fieldline.transport.mqtt.session.DownlinkMessage;
import io.fieldline.transport.mqtt.session.DownlinkState;
import io.fieldline.transport.mqtt.session.RpcDelivery;
import io.fieldline.transport.mqtt.session.SessionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connected session as the {@link DeviceEventListener} of one device: its own, or a child of a
 * gateway's session ({@link DownlinkRoute} says which topics and shapes). Each event is decided on
 * the calling thread, from state any thread may read — is the session subscribed, does the message
 * fit the session's bound — and what is taken is handed to the connection's event loop, in the
 * order the events came:
 *
 * <ul>
 *   <li>{@code AttributesUpdated} / {@code AttributesDeleted} of {@code SHARED_SCOPE}, if the
 *       session subscribed to the route's attributes topic: a push there. One that does not fit the
 *       bound is dropped and counted ({@code downlink{outcome=queue_full}}): the device (or
 *       gateway) can read its attributes back. Other scopes are not for devices.
 *   <li>{@code RpcRequested}, if the session subscribed to the route's RPC filter and tracks fewer
 *       than {@code max-pending-rpc} requests and has room: a request on the route's RPC topic.
 *       Otherwise it is not taken, and its sender offers it again later.
 * </ul>
 *
 * <p>Thread-safe: called from any thread, possibly concurrently.
 */
final class DownlinkListener implements DeviceEventListener {

  private static final Logger LOG = LoggerFactory.getLogger(DownlinkListener.class);
  private static final LogThrottle FULL = new LogThrottle();

  private final Downlink downlink;
  private final SessionState session;
  private final DownlinkRoute route;
  private final long maxQueuedBytes;
  private final int maxPendingRpc;
  private final MqttMetrics metrics;
  private final String logPrefix;
  private volatile boolean open = true;

  DownlinkListener(
      Downlink downlink,
      SessionState session,
      DownlinkRoute route,
      MqttTransportConfig.Downlink config,
      MqttMetrics metrics,
      String logPrefix) {
    this.downlink = downlink;
    this.session = session;
    this.route = route;
    this.maxQueuedBytes = config.maxQueuedBytes();
    this.maxPendingRpc = config.maxPendingRpc();
    this.metrics = metrics;
    this.logPrefix = logPrefix;
  }

  @Override
  public boolean onEvent(DeviceEvent event) {
    if (!open) {
      return false;
    }
    if (event instanceof AttributesUpdated updated) {
      return updated.scope() == AttributeScope.SHARED_SCOPE
          && !updated.entries().isEmpty()
          && push(route.updated(updated.entries()));
    }
    if (event instanceof AttributesDeleted deleted) {
      return deleted.scope() == AttributeScope.SHARED_SCOPE
          && !deleted.keys().isEmpty()
          && push(route.deleted(deleted.keys()));
    }
    if (event instanceof RpcRequested requested) {
      return take(requested);
    }
    return false; // RpcSubscribed: for whoever holds requests, not for sessions
  }

  /** The connection closed: no more events are taken. */
  void close() {
    open = false;
  }

  private boolean push(byte[] payload) {
    String topic = route.attributesTopic();
    int qos = DownlinkTopics.qos(session, topic);
    if (qos < 0) {
      return false;
    }
    DownlinkMessage message = new DownlinkMessage(topic, payload, qos, null);
    if (message.heldBytes() > maxQueuedBytes) {
      tooLarge(message, "shared-attribute push dropped");
      return false;
    }
    if (!downlink.hold(message)) {
      full("shared-attribute push dropped");
      return false;
    }
    return downlink.send(message);
  }

  private boolean take(RpcRequested requested) {
    int qos = DownlinkTopics.qos(session, route.rpcFilter());
    if (qos < 0) {
      return false;
    }
    DownlinkState state = session.downlink();
    RpcDelivery rpc = new RpcDelivery(state.nextRequestId(), requested.rpc(), requested.callback());
    DownlinkMessage message =
        new DownlinkMessage(
            route.rpcTopic(rpc.requestId()),
            route.rpcRequest(
                rpc.requestId(), requested.rpc().method(), requested.rpc().paramsJson()),
            qos,
            rpc);
    if (message.heldBytes() > maxQueuedBytes) {
      // It would never fit: taken, so that it is reported instead of offered again for ever.
      tooLarge(message, "server-side RPC given up");
      downlink.refuse(
          rpc,
          "the request of "
              + message.heldBytes()
              + " bytes exceeds "
              + maxQueuedBytes
              + " bytes, the most the session holds (max-queued-bytes)");
      metrics.rpc(RpcOutcome.TAKEN);
      return true;
    }
    if (!state.track(rpc, maxPendingRpc)) {
      full("server-side RPC not taken");
      return false;
    }
    if (!downlink.hold(message)) {
      state.untrack(rpc);
      full("server-side RPC not taken");
      return false;
    }
    if (!downlink.send(message)) {
      state.untrack(rpc);
      return false;
    }
    metrics.rpc(RpcOutcome.TAKEN);
    return true;
  }

  private void tooLarge(DownlinkMessage message, String what) {
    metrics.downlink(DownlinkOutcome.TOO_LARGE);
    FULL.warn(
        LOG,
        "{} {}: {} bytes, above the session's max-queued-bytes",
        logPrefix,
        what,
        message.heldBytes());
  }

  private void full(String what) {
    metrics.downlink(DownlinkOutcome.QUEUE_FULL);
    FULL.warn(
        LOG,
        "{} {}: the session holds as many messages or pending requests as it may",
        logPrefix,
        what);
  }
}
