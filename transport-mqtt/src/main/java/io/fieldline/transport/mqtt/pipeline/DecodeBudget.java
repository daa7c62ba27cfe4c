package io.fieldline.transport.mqtt.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * Bounds what Netty's {@code MqttDecoder} may accumulate for one packet. The decoder checks a
 * packet's declared remaining length against {@code max-packet-size}, but not the lengths inside
 * it: an MQTT 5 Property Length may claim 268 MB inside a 20-byte packet, and the decoder (a
 * replaying decoder) then waits for, and keeps, every byte the client sends until the claim is met.
 * This pair of stages counts the bytes handed to the decoder since it last produced a packet;
 * beyond {@code max-packet-size} + 5 (the largest fixed header) {@link #EXCEEDED} goes down the
 * pipeline, the session closes the connection as malformed, and no more bytes reach the decoder.
 *
 * <p>The count is reset whenever a packet comes out, even in the middle of a read, so it may miss
 * the part of one read (at most {@code max-read-size}, or one 16 KiB TLS record) that follows the
 * last complete packet: the bound is the packet size plus one read.
 *
 * <p>{@link #bytesIn()} goes before the decoder, {@link #packetsOut()} right after it. Confined to
 * the channel's event loop; one per channel.
 */
public final class DecodeBudget {

  /** The user event fired once when the decoder was handed more than the budget for a packet. */
  public static final Object EXCEEDED = new Object();

  private final long limit;
  private long pending;
  private boolean exceeded;

  DecodeBudget(int maxPacketSize) {
    this.limit = maxPacketSize + 5L;
  }

  /** The stage before the decoder: counts bytes, and stops passing them once over budget. */
  ChannelInboundHandlerAdapter bytesIn() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (exceeded) {
          ReferenceCountUtil.release(msg);
          return;
        }
        if (msg instanceof ByteBuf bytes) {
          pending += bytes.readableBytes();
        }
        // Counted before, judged after the decoder had the bytes: a read may hold many small
        // packets, or the start of one too large (which the decoder itself refuses).
        ctx.fireChannelRead(msg);
        if (pending > limit && !exceeded) {
          exceeded = true;
          ctx.fireUserEventTriggered(EXCEEDED);
        }
      }
    };
  }

  /** The stage after the decoder: a packet came out, its bytes are no longer pending. */
  ChannelInboundHandlerAdapter packetsOut() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        pending = 0;
        ctx.fireChannelRead(msg);
      }
    };
  }

  /** How many bytes past the last decoded packet the decoder may be handed. */
  public long limit() {
    return limit;
  }
}
