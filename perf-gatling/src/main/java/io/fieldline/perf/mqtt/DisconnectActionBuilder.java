package io.fieldline.perf.mqtt;

import io.gatling.javaapi.core.ActionBuilder;

/** {@code mqtt("disconnect").disconnect()}. */
public final class DisconnectActionBuilder implements ActionBuilder {

  private final String requestName;

  DisconnectActionBuilder(String requestName) {
    this.requestName = requestName;
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    return (ctx, next) ->
        new DisconnectAction(
            requestName,
            next,
            ctx.protocolComponentsRegistry().components(MqttProtocolKey.INSTANCE));
  }
}
