package io.fieldline.transport.mqtt.pipeline;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last stage: an exception nobody handled closes that channel only. I/O errors (a peer that
 * reset the connection) are routine and logged at DEBUG; anything else is a bug, logged once at
 * ERROR with the peer's address.
 */
@ChannelHandler.Sharable
public final class ExceptionLastHandler extends ChannelInboundHandlerAdapter {

  public static final ExceptionLastHandler INSTANCE = new ExceptionLastHandler();

  private static final Logger LOG = LoggerFactory.getLogger(ExceptionLastHandler.class);

  private ExceptionLastHandler() {}

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof IOException) {
      LOG.debug("[mqtt|-|{}] I/O error: {}", ctx.channel().remoteAddress(), cause.toString());
    } else {
      LOG.error("[mqtt|-|{}] unexpected error, closing", ctx.channel().remoteAddress(), cause);
    }
    ctx.close();
  }
}
