package io.fieldline.transport.mqtt;

import io.fieldline.common.log.LogThrottle;
import io.fieldline.transport.mqtt.session.CloseReason;
import io.fieldline.transport.mqtt.session.LogSafe;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Right behind the TLS listener's {@code SslHandler}: a failed handshake or bytes that are not TLS
 * (a clear-text client on the TLS port, a scanner) close that connection only, counted as {@code
 * rejected{reason=tls}} and logged at WARN once per 10 s, without a stack trace. Every other
 * exception goes on down the pipeline.
 */
final class TlsFailureHandler extends ChannelInboundHandlerAdapter {

  private static final Logger LOG = LoggerFactory.getLogger(TlsFailureHandler.class);
  private static final LogThrottle FAILURES = new LogThrottle();

  private final MqttMetrics metrics;

  TlsFailureHandler(MqttMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    Throwable tls = cause instanceof DecoderException ? cause.getCause() : cause;
    if (tls instanceof SSLException || tls instanceof NotSslRecordException) {
      metrics.closed(CloseReason.TLS);
      // Never the message of a NotSslRecordException: it is a hex dump of what the client sent,
      // which for a clear-text CONNECT holds the device's access token.
      String what =
          tls instanceof NotSslRecordException
              ? "not TLS (clear text or other bytes)"
              : tls.getClass().getSimpleName() + ": " + LogSafe.text(tls.getMessage());
      FAILURES.warn(
          LOG, "[mqtt|-|{}] TLS failed, closing: {}", ctx.channel().remoteAddress(), what);
      ctx.close();
      return;
    }
    ctx.fireExceptionCaught(cause);
  }
}
