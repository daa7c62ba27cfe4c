package io.fieldline.perf.mqtt;

import io.gatling.core.CoreComponents;
import io.gatling.core.config.GatlingConfiguration;
import io.gatling.core.protocol.Protocol;
import io.gatling.core.protocol.ProtocolKey;
import scala.Function1;

/**
 * How Gatling finds the MQTT protocol of a scenario and builds its components once per simulation.
 * The registry indexes protocols by their exact class, hence {@link #protocolClass()}.
 */
final class MqttProtocolKey implements ProtocolKey<MqttProtocol, MqttComponents> {

  static final MqttProtocolKey INSTANCE = new MqttProtocolKey();

  private MqttProtocolKey() {}

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Class<Protocol> protocolClass() {
    return (Class) MqttProtocol.class;
  }

  @Override
  public MqttProtocol defaultProtocolValue(GatlingConfiguration configuration) {
    return MqttProtocol.defaults();
  }

  @Override
  public Function1<MqttProtocol, MqttComponents> newComponents(CoreComponents coreComponents) {
    return protocol -> new MqttComponents(protocol, coreComponents);
  }
}
