package io.fieldline.perf.mqtt;

import io.gatling.javaapi.core.ActionBuilder;
import io.gatling.javaapi.core.internal.Expressions;
import io.netty.handler.codec.mqtt.MqttQoS;
import java.nio.charset.StandardCharsets;

/**
 * {@code mqtt("publish").publish("v1/devices/me/telemetry").qos(1).payload(factory)}: builds a
 * {@link PublishAction}.
 */
public final class PublishActionBuilder implements ActionBuilder {

  static final PayloadFactory EMPTY = message -> new byte[0];

  private final String requestName;
  private final String topic;
  private final int qos;
  private final PayloadFactory payload;

  PublishActionBuilder(String requestName, String topic, int qos, PayloadFactory payload) {
    if (qos != 0 && qos != 1) {
      throw new IllegalArgumentException("publish supports QoS 0 and 1, not " + qos);
    }
    this.requestName = requestName;
    this.topic = topic;
    this.qos = qos;
    this.payload = payload;
  }

  /** QoS 0 (timed until written) or 1 (timed until PUBACK, the default). */
  public PublishActionBuilder qos(int qos) {
    return new PublishActionBuilder(requestName, topic, qos, payload);
  }

  /** The payload of every message, built per message. */
  public PublishActionBuilder payload(PayloadFactory payload) {
    return new PublishActionBuilder(requestName, topic, qos, payload);
  }

  /** A fixed payload. */
  public PublishActionBuilder payload(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    return payload(message -> bytes);
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    var topicExpression = Expressions.toStringExpression(topic);
    MqttQoS level = MqttQoS.valueOf(qos);
    return (ctx, next) ->
        new PublishAction(
            requestName,
            next,
            ctx.protocolComponentsRegistry().components(MqttProtocolKey.INSTANCE),
            topicExpression,
            level,
            payload);
  }
}
