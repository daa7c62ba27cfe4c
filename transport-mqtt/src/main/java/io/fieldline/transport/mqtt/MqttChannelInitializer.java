package io.fieldline.transport.mqtt;

import io.fieldline.common.log.LogThrottles;
import io.fieldline.transport.mqtt.pipeline.MqttPipeline;
import io.fieldline.transport.mqtt.pipeline.PipelineNames;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.PreAuthLimits;
import io.fieldline.transport.mqtt.session.PreAuthLimits.Admission;
import io.fieldline.transport.mqtt.session.SessionContext;
import io.fieldline.transport.mqtt.tls.TlsContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.socket.SocketChannel;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds each connection's pipeline ({@link MqttPipeline}) around a new {@link MqttSessionHandler}
 * and keeps the server's set of open sessions. A connection the {@link PreAuthLimits} refuse
 * ({@code max-connections}, {@code max-unauthenticated-connections}, the per-address connection
 * rate) is closed before anything is read, counted in {@code fieldline.mqtt.rejected{reason}} and
 * logged at most once per kind per 10 s.
 *
 * <p>Shared by every channel; runs on each channel's event loop, several at once.
 */
final class MqttChannelInitializer extends ChannelInitializer<SocketChannel> {

  private static final Logger LOG = LoggerFactory.getLogger(MqttChannelInitializer.class);
  private static final LogThrottles<Admission> REFUSED = new LogThrottles<>(Admission.class);

  private final SessionContext context;
  private final Set<MqttSessionHandler> sessions;
  private final @Nullable TlsContext tls;

  /**
   * @param tls the server's TLS context for the TLS listener, null for the plain one
   */
  MqttChannelInitializer(
      SessionContext context, Set<MqttSessionHandler> sessions, @Nullable TlsContext tls) {
    this.context = context;
    this.sessions = sessions;
    this.tls = tls;
  }

  @Override
  protected void initChannel(SocketChannel channel) {
    MqttTransportConfig config = context.config();
    PreAuthLimits limits = context.preAuth();
    Admission admission = limits.admit(channel);
    CloseReason refused = admission.reason();
    if (refused != null) {
      context.metrics().closed(refused);
      REFUSED
          .get(admission)
          .warn(
              LOG,
              "[mqtt|-|{}] connection refused ({}): {} open, {} unauthenticated",
              channel.remoteAddress(),
              refused.tag(),
              limits.open(),
              limits.unauthenticated());
      channel.close();
      return;
    }
    MqttSessionHandler session = new MqttSessionHandler(context);
    sessions.add(session);
    channel.closeFuture().addListener(closed -> sessions.remove(session));
    MqttPipeline.addStages(channel.pipeline(), config, session);
    if (tls != null) {
      // The handshake runs within the connection's CONNECT deadline, like a slow CONNECT.
      channel
          .pipeline()
          .addFirst(PipelineNames.TLS_FAILURES, new TlsFailureHandler(context.metrics()))
          .addFirst(PipelineNames.TLS, tls.newHandler(channel.alloc()));
    }
  }
}
