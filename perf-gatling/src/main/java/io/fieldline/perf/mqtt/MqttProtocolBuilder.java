package io.fieldline.perf.mqtt;

import io.gatling.core.protocol.Protocol;
import io.gatling.javaapi.core.ProtocolBuilder;
import java.time.Duration;

/**
 * Java DSL for {@link MqttProtocol}: {@code mqtt().host("127.0.0.1").port(1883).keepAlive(60)}.
 * Immutable: every method returns a new builder.
 */
public final class MqttProtocolBuilder implements ProtocolBuilder {

  private final MqttProtocol protocol;

  MqttProtocolBuilder(MqttProtocol protocol) {
    this.protocol = protocol;
  }

  public MqttProtocolBuilder host(String host) {
    return with(new MqttProtocol(host, p().port(), p().keepAlive(), p().cleanSession(),
        p().connectTimeout(), p().ackTimeout(), p().clientIdPrefix(), p().maxInboundQueue(),
        p().stats()));
  }

  public MqttProtocolBuilder port(int port) {
    return with(new MqttProtocol(p().host(), port, p().keepAlive(), p().cleanSession(),
        p().connectTimeout(), p().ackTimeout(), p().clientIdPrefix(), p().maxInboundQueue(),
        p().stats()));
  }

  /** Keep-alive in seconds (0 disables it). */
  public MqttProtocolBuilder keepAlive(int seconds) {
    return with(new MqttProtocol(p().host(), p().port(), Duration.ofSeconds(seconds),
        p().cleanSession(), p().connectTimeout(), p().ackTimeout(), p().clientIdPrefix(),
        p().maxInboundQueue(), p().stats()));
  }

  public MqttProtocolBuilder cleanSession(boolean cleanSession) {
    return with(new MqttProtocol(p().host(), p().port(), p().keepAlive(), cleanSession,
        p().connectTimeout(), p().ackTimeout(), p().clientIdPrefix(), p().maxInboundQueue(),
        p().stats()));
  }

  public MqttProtocolBuilder connectTimeout(Duration timeout) {
    return with(new MqttProtocol(p().host(), p().port(), p().keepAlive(), p().cleanSession(),
        timeout, p().ackTimeout(), p().clientIdPrefix(), p().maxInboundQueue(), p().stats()));
  }

  public MqttProtocolBuilder ackTimeout(Duration timeout) {
    return with(new MqttProtocol(p().host(), p().port(), p().keepAlive(), p().cleanSession(),
        p().connectTimeout(), timeout, p().clientIdPrefix(), p().maxInboundQueue(), p().stats()));
  }

  public MqttProtocolBuilder clientIdPrefix(String prefix) {
    return with(new MqttProtocol(p().host(), p().port(), p().keepAlive(), p().cleanSession(),
        p().connectTimeout(), p().ackTimeout(), prefix, p().maxInboundQueue(), p().stats()));
  }

  public MqttProtocolBuilder maxInboundQueue(int messages) {
    return with(new MqttProtocol(p().host(), p().port(), p().keepAlive(), p().cleanSession(),
        p().connectTimeout(), p().ackTimeout(), p().clientIdPrefix(), messages, p().stats()));
  }

  /** Where the run's latencies, counters and acknowledgement ledger go (read it in after()). */
  public MqttProtocolBuilder stats(MqttRunStats stats) {
    return with(new MqttProtocol(p().host(), p().port(), p().keepAlive(), p().cleanSession(),
        p().connectTimeout(), p().ackTimeout(), p().clientIdPrefix(), p().maxInboundQueue(),
        stats));
  }

  /** The settings as built so far. */
  public MqttProtocol settings() {
    return protocol;
  }

  @Override
  public Protocol protocol() {
    return protocol;
  }

  private MqttProtocol p() {
    return protocol;
  }

  private static MqttProtocolBuilder with(MqttProtocol protocol) {
    return new MqttProtocolBuilder(protocol);
  }
}
