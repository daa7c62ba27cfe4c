package io.fieldline.transport.mqtt.pipeline;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * Counts the packets decoded before the session is accepted. While the access token is looked up
 * the session does not read, and flow control holds whatever the client pipelined behind CONNECT;
 * this stage bounds how much that can be: beyond {@code max-queued-before-connack} packets after
 * CONNECT, the rest are dropped and {@link #OVERFLOW} is sent down the pipeline, on which the
 * session closes the connection. Removed from the pipeline once CONNACK 0x00 is sent ({@link
 * MqttPipeline#sessionAccepted}), so it costs nothing on a connected session.
 *
 * <p>Confined to the channel's event loop; one per channel.
 */
public final class PreConnackLimit extends ChannelInboundHandlerAdapter {

  /** The user event fired once when more than the bound arrived before CONNACK. */
  public static final Object OVERFLOW = new Object();

  private final int maxAfterConnect;
  private int seen;

  PreConnackLimit(int maxAfterConnect) {
    this.maxAfterConnect = maxAfterConnect;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    // The first packet is the CONNECT itself; the bound is on what follows it.
    seen++;
    if (seen <= maxAfterConnect + 1) {
      ctx.fireChannelRead(msg);
      return;
    }
    ReferenceCountUtil.release(msg);
    if (seen == maxAfterConnect + 2) {
      ctx.fireUserEventTriggered(OVERFLOW);
    }
  }
}
