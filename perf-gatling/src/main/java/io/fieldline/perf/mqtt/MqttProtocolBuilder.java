package io.fieldline.perf.mqtt;

import io.gatling.core.protocol.Protocol;
import io.gatling.javaapi.core.ProtocolBuilder;
import java.time.Duration;
import java.util.List;

/**
 * Java DSL for {@link MqttProtocol}: {@code mqtt().host("127.0.0.1").port(1883).keepAlive(60)} (or
 * {@code .ports(List.of(1883, 1884))} to spread the users over several listeners; {@code
 * .tls(MqttTls.trusting(ca, SslProvider.JDK))} for MQTT over TLS). Immutable: every method returns
 * a new builder.
 */
public final class MqttProtocolBuilder implements ProtocolBuilder {

  private final MqttProtocol protocol;

  MqttProtocolBuilder(MqttProtocol protocol) {
    this.protocol = protocol;
  }

  public MqttProtocolBuilder host(String host) {
    return with(
        new MqttProtocol(
            host,
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  /** One broker port for every user. */
  public MqttProtocolBuilder port(int port) {
    return ports(List.of(port));
  }

  /**
   * Several ports of one host, e.g. the MQTT listeners of the nodes of a local cluster: user {@code
   * i} connects to {@code ports[i mod n]}.
   */
  public MqttProtocolBuilder ports(List<Integer> ports) {
    return with(
        new MqttProtocol(
            p().host(),
            ports,
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  /** Keep-alive in seconds (0 disables it). */
  public MqttProtocolBuilder keepAlive(int seconds) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            Duration.ofSeconds(seconds),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  public MqttProtocolBuilder cleanSession(boolean cleanSession) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            cleanSession,
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  public MqttProtocolBuilder connectTimeout(Duration timeout) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            timeout,
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  public MqttProtocolBuilder ackTimeout(Duration timeout) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            timeout,
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  public MqttProtocolBuilder clientIdPrefix(String prefix) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            prefix,
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  public MqttProtocolBuilder maxInboundQueue(int messages) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            messages,
            p().stats(),
            p().sourceAddresses(),
            p().tls()));
  }

  /** Where the run's latencies, counters and acknowledgement ledger go (read it in after()). */
  public MqttProtocolBuilder stats(MqttRunStats stats) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            stats,
            p().sourceAddresses(),
            p().tls()));
  }

  /**
   * Spread the users over {@code count} loopback source addresses (0: the OS's choice); see {@link
   * MqttProtocol#sourceAddress}.
   */
  public MqttProtocolBuilder sourceAddresses(int count) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            count,
            p().tls()));
  }

  /**
   * MQTT over TLS: every connection starts with a TLS handshake (see {@link MqttTls}) before its
   * CONNECT, and the handshake's time and outcome are recorded; the ports are then the broker's TLS
   * ports.
   */
  public MqttProtocolBuilder tls(MqttTls tls) {
    return with(
        new MqttProtocol(
            p().host(),
            p().ports(),
            p().keepAlive(),
            p().cleanSession(),
            p().connectTimeout(),
            p().ackTimeout(),
            p().clientIdPrefix(),
            p().maxInboundQueue(),
            p().stats(),
            p().sourceAddresses(),
            tls));
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
