package io.fieldline.transport.mqtt.session;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How the server ends a TCP connection so that what it wrote last reaches the client: the
 * acknowledgements sent before a failed write, a refusing CONNACK, an MQTT 5 DISCONNECT.
 *
 * <p>A socket closed while its receive buffer holds bytes the server has not read (a client that
 * went on publishing while the server had stopped reading it) is reset by the kernel rather than
 * closed (RFC 2525 §2.17). A reset may destroy data the client has not consumed yet, and a client
 * whose next send fails on it gives the connection up without reading what was already there (seen
 * with Paho: an acknowledged message sent again, its values stored twice). So the connection ends
 * in two steps instead: the output is shut down once everything written before is on the wire (a
 * TLS close_notify first) — the client reads it all, then end-of-stream — and whatever the client
 * still sends is read and dropped until it closes its side, or {@code linger} has passed.
 *
 * <p>Added at the head of the pipeline, so nothing read any more reaches the MQTT stages. A channel
 * that is not a socket (tests' embedded channels) is closed at once.
 */
final class LingeringClose extends ChannelInboundHandlerAdapter {

  static final String NAME = "lingeringClose";

  private final Duration linger;

  LingeringClose(Duration linger) {
    this.linger = linger;
  }

  /** Ends {@code channel}'s connection as described above. */
  static void end(Channel channel, Duration linger) {
    if (!(channel instanceof DuplexChannel) || !channel.isActive()) {
      channel.close();
      return;
    }
    if (channel.pipeline().get(NAME) == null) {
      channel.pipeline().addFirst(NAME, new LingeringClose(linger));
    }
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    Channel channel = ctx.channel();
    // Writes leave in order: once this empty one is written, so is everything before it.
    ctx.writeAndFlush(Unpooled.EMPTY_BUFFER)
        .addListener(
            written -> {
              if (written.isSuccess() && channel.isActive()) {
                ((DuplexChannel) channel).shutdownOutput();
              } else {
                channel.close();
              }
            });
    ScheduledFuture<?> deadline =
        ctx.executor().schedule(() -> channel.close(), linger.toNanos(), TimeUnit.NANOSECONDS);
    channel.closeFuture().addListener(closed -> deadline.cancel(false));
    // The client's end-of-stream closes the channel (half-closure is not allowed on it).
    channel.config().setAutoRead(true);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ReferenceCountUtil.release(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    // nothing was passed on
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
