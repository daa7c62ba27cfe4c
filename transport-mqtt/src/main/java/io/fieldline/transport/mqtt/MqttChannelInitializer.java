package io.fieldline.transport.mqtt;

import io.fieldline.transport.mqtt.pipeline.ExceptionLastHandler;
import io.fieldline.transport.mqtt.pipeline.KeepAlive;
import io.fieldline.transport.mqtt.pipeline.PipelineNames;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.MqttSessionHandler;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.flush.FlushConsolidationHandler;
import java.util.Set;

/**
 * Builds each connection's pipeline: flush consolidation → idle timer → decoder (with the maximum
 * packet size) → encoder → session → last-resort exception handler. Connections beyond {@code
 * max-connections} are closed before anything is read.
 */
final class MqttChannelInitializer extends ChannelInitializer<SocketChannel> {

  // Acks completed by storage callbacks arrive as separate event-loop tasks; consolidating their
  // flushes (also outside reads) turns a burst of PUBACKs into one write syscall.
  private static final int EXPLICIT_FLUSHES_BEFORE_FLUSH = 64;

  private final SessionContext context;
  private final Set<MqttSessionHandler> sessions;

  MqttChannelInitializer(SessionContext context, Set<MqttSessionHandler> sessions) {
    this.context = context;
    this.sessions = sessions;
  }

  @Override
  protected void initChannel(SocketChannel channel) {
    MqttTransportConfig config = context.config();
    if (sessions.size() >= config.maxConnections()) {
      context.metrics().closed(CloseReason.CONNECTION_LIMIT);
      channel.close();
      return;
    }
    MqttSessionHandler session = new MqttSessionHandler(context);
    sessions.add(session);
    channel.closeFuture().addListener(closed -> sessions.remove(session));
    channel
        .pipeline()
        .addLast(
            PipelineNames.FLUSH_CONSOLIDATION,
            new FlushConsolidationHandler(EXPLICIT_FLUSHES_BEFORE_FLUSH, true))
        .addLast(PipelineNames.IDLE, KeepAlive.beforeConnect(config.connectTimeout().toMillis()))
        .addLast(
            PipelineNames.DECODER,
            new MqttDecoder(config.maxPacketSize(), config.maxClientIdLength()))
        .addLast(PipelineNames.ENCODER, MqttEncoder.INSTANCE)
        .addLast(PipelineNames.SESSION, session)
        .addLast(PipelineNames.EXCEPTION_LAST, ExceptionLastHandler.INSTANCE);
  }
}
