package io.fieldline.perf.mqtt;

import io.gatling.core.CoreComponents;
import io.gatling.core.protocol.ProtocolComponents;
import io.gatling.core.session.Session;
import io.gatling.netty.util.Transports;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.jspecify.annotations.Nullable;
import scala.Function1;
import scala.runtime.BoxedUnit;

/**
 * Per-simulation state of the MQTT protocol: the settings, Gatling's core components, the broker
 * addresses (resolved once, one per port) and a {@link Bootstrap} template whose channel type
 * matches Gatling's event loops (epoll, io_uring or NIO, as Gatling itself is configured). On a
 * user's exit its connection is closed.
 */
final class MqttComponents implements ProtocolComponents {

  private final MqttProtocol protocol;
  private final CoreComponents core;
  private final List<InetSocketAddress> brokers;
  private final Bootstrap template;

  MqttComponents(MqttProtocol protocol, CoreComponents core) {
    this.protocol = protocol;
    this.core = core;
    this.brokers =
        protocol.ports().stream()
            .map(port -> new InetSocketAddress(protocol.host(), port))
            .toList();
    ChannelFactory<? extends SocketChannel> channels =
        Transports.newSocketChannelFactory(
            core.configuration().netty().useNativeTransport(),
            core.configuration().netty().useIoUring());
    this.template =
        new Bootstrap()
            .channelFactory(channels)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(
                ChannelOption.CONNECT_TIMEOUT_MILLIS,
                (int) Math.min(Integer.MAX_VALUE, protocol.connectTimeout().toMillis()));
  }

  MqttProtocol protocol() {
    return protocol;
  }

  CoreComponents core() {
    return core;
  }

  /** The address Gatling user {@code userId} connects to. */
  InetSocketAddress broker(long userId) {
    return brokers.get(protocol.portIndex(userId));
  }

  /** The local address Gatling user {@code userId} binds, or null for the OS's choice. */
  @Nullable InetSocketAddress source(long userId) {
    InetAddress address = protocol.sourceAddress(userId);
    return address == null ? null : new InetSocketAddress(address, 0);
  }

  /** A bootstrap for one connection; the caller sets the group (the user's loop) and handler. */
  Bootstrap bootstrap() {
    return template.clone();
  }

  @Override
  public Function1<Session, Session> onStart() {
    return session -> session;
  }

  @Override
  public Function1<Session, BoxedUnit> onExit() {
    return session -> {
      MqttConnection connection = MqttConnection.of(session);
      if (connection != null) {
        connection.disconnect();
      }
      return BoxedUnit.UNIT;
    };
  }
}
