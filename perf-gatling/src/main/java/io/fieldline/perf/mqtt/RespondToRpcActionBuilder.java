package io.fieldline.perf.mqtt;

import io.gatling.javaapi.core.ActionBuilder;
import io.netty.handler.codec.mqtt.MqttQoS;

/**
 * {@code mqtt("rpc subscribe").respondToRpc().qos(1)}: makes the device an RPC responder for the
 * rest of its connection. Installs {@link RpcResponder} on the user's connection, then subscribes
 * to {@code v1/devices/me/rpc/request/+} (timed SUBSCRIBE → SUBACK, KO on refusal). From then on
 * every request the server publishes is answered at once on {@code v1/devices/me/rpc/response/{n}}
 * on the connection's event loop, with no Gatling action per request, while the user goes on (a
 * {@code pause} to hold the connection, or publishing telemetry). Requests are counted in {@link
 * MqttRunStats} (summary {@code rpcResponder}, per second {@code rpcRequestedPerSecond}) and never
 * reach {@code awaitMessage}.
 */
public final class RespondToRpcActionBuilder implements ActionBuilder {

  private final String requestName;
  private final int qos;

  RespondToRpcActionBuilder(String requestName, int qos) {
    if (qos < 0 || qos > 1) {
      throw new IllegalArgumentException("RPC responder QoS must be 0 or 1: " + qos);
    }
    this.requestName = requestName;
    this.qos = qos;
  }

  /**
   * QoS of the subscription and of the answers (0 or 1, default 1: the server's requests come with
   * PUBACK, each answer is tracked to its PUBACK, a missing one counted as a timeout).
   */
  public RespondToRpcActionBuilder qos(int qos) {
    return new RespondToRpcActionBuilder(requestName, qos);
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    MqttQoS level = MqttQoS.valueOf(qos);
    return SubscribeActionBuilder.subscribe(requestName, RpcResponder.REQUEST_FILTER, level, level);
  }
}
