package io.fieldline.transport.mqtt;

import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Builds each connection's pipeline ({@link MqttPipeline}) around a new {@link MqttSessionHandler}
 * and keeps the server's set of open sessions. Connections beyond {@code max-connections} are
 * closed before anything is read.
 *
 * <p>Shared by every channel; runs on each channel's event loop, several at once.
 */
final class MqttChannelInitializer extends ChannelInitializer<SocketChannel> {

  private final SessionContext context;
  private final Set<MqttSessionHandler> sessions;
  // Channels are initialised on several event loops at once: count with one atomic step.
  private final AtomicInteger open = new AtomicInteger();

  MqttChannelInitializer(SessionContext context, Set<MqttSessionHandler> sessions) {
    this.context = context;
    this.sessions = sessions;
  }

  @Override
  protected void initChannel(SocketChannel channel) {
    MqttTransportConfig config = context.config();
    if (open.incrementAndGet() > config.maxConnections()) {
      open.decrementAndGet();
      context.metrics().closed(CloseReason.CONNECTION_LIMIT);
      channel.close();
      return;
    }
    MqttSessionHandler session = new MqttSessionHandler(context);
    sessions.add(session);
    channel
        .closeFuture()
        .addListener(
            closed -> {
              sessions.remove(session);
              open.decrementAndGet();
            });
    MqttPipeline.addStages(channel.pipeline(), config, session);
  }
}
