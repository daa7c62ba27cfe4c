package io.fieldline.perf.mqtt;

import io.gatling.javaapi.core.ActionBuilder;
import io.gatling.javaapi.core.internal.Expressions;
import io.netty.handler.codec.mqtt.MqttQoS;
import org.jspecify.annotations.Nullable;

/** {@code mqtt("subscribe").subscribe("v1/devices/me/rpc/request/+").qos(1)}. */
public final class SubscribeActionBuilder implements ActionBuilder {

  private final String requestName;
  private final String topicFilter;
  private final int qos;

  SubscribeActionBuilder(String requestName, String topicFilter, int qos) {
    if (qos < 0 || qos > 2) {
      throw new IllegalArgumentException("QoS must be 0..2: " + qos);
    }
    this.requestName = requestName;
    this.topicFilter = topicFilter;
    this.qos = qos;
  }

  /** Requested QoS (0..2, default 1). */
  public SubscribeActionBuilder qos(int qos) {
    return new SubscribeActionBuilder(requestName, topicFilter, qos);
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    return subscribe(requestName, topicFilter, MqttQoS.valueOf(qos), null);
  }

  /** A {@link SubscribeAction}; with {@code rpcAnswerQos} it installs the RPC responder first. */
  static io.gatling.core.action.builder.ActionBuilder subscribe(
      String requestName, String topicFilter, MqttQoS qos, @Nullable MqttQoS rpcAnswerQos) {
    var filter = Expressions.toStringExpression(topicFilter);
    return (ctx, next) ->
        new SubscribeAction(
            requestName,
            next,
            ctx.protocolComponentsRegistry().components(MqttProtocolKey.INSTANCE),
            filter,
            qos,
            rpcAnswerQos);
  }
}
