package io.fieldline.perf.mqtt;

import io.gatling.javaapi.core.ActionBuilder;

/** {@code mqtt("drop").drop()}. */
public final class DropActionBuilder implements ActionBuilder {

  private final String requestName;

  DropActionBuilder(String requestName) {
    this.requestName = requestName;
  }

  @Override
  public io.gatling.core.action.builder.ActionBuilder asScala() {
    return (ctx, next) ->
        new DropAction(
            requestName,
            next,
            ctx.protocolComponentsRegistry().components(MqttProtocolKey.INSTANCE));
  }
}
