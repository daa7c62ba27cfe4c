package io.fieldline.transport.mqtt.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;

/**
 * Makes every MQTT packet decode from its own bytes. Netty's {@code MqttDecoder} checks a packet's
 * remaining length against {@code max-packet-size}, but not the lengths inside the packet against
 * its remaining length: a string or an MQTT 5 Property Length that claims more bytes than the
 * packet holds makes the decoder (a replaying decoder) wait for them, reading on into the next
 * packets, holding the connection silent until a timeout. This pair of stages follows the packet
 * boundaries the fixed headers announce (type byte, remaining length) in the bytes handed to the
 * decoder, and counts the packets that come out; when the decoder has been given a complete packet
 * and produced nothing for it, {@link #EXCEEDED} goes down the pipeline, the session closes the
 * connection as malformed, and no more bytes reach the decoder.
 *
 * <p>The same stage applies {@code max-packet-size} to the whole packet, fixed header included
 * (MQTT 5 §3.1.2.11.4, §3.2.2.3.6: the Maximum Packet Size announced in CONNACK is the total),
 * where the decoder checks the remaining length only: a packet whose type byte, remaining length
 * and body add up to more is not handed to the decoder, and {@link #TOO_LARGE} goes down the
 * pipeline.
 *
 * <p>{@link #bytesIn()} goes before the decoder, {@link #packetsOut()} right after it. Confined to
 * the channel's event loop; one per channel.
 */
public final class DecodeBudget {

  /** The user event fired once when a complete packet did not decode by itself. */
  public static final Object EXCEEDED = new Object();

  /** The user event fired once when a packet's total size is above {@code max-packet-size}. */
  public static final Object TOO_LARGE = new Object();

  private enum Expect {
    TYPE,
    LENGTH,
    BODY,
    /** A remaining length of more than four bytes: the decoder refuses it itself. */
    NOTHING
  }

  private final long maxPacketSize;
  private Expect expect = Expect.TYPE;
  private int length;
  private int shift;
  private int lengthBytes;
  private long bodyLeft;
  private long completePackets;
  private long packetsOut;
  private boolean exceeded;
  // Where, in the buffer being followed, the packet too large begins (-1: none found; 0 when it
  // began in an earlier buffer).
  private int tooLargeAt = -1;

  /** Follows packets of at most {@code maxPacketSize} bytes, fixed header included. */
  DecodeBudget(long maxPacketSize) {
    this.maxPacketSize = maxPacketSize;
  }

  /** The stage before the decoder: follows packet boundaries, stops passing bytes once broken. */
  ChannelInboundHandlerAdapter bytesIn() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (exceeded) {
          ReferenceCountUtil.release(msg);
          return;
        }
        if (msg instanceof ByteBuf bytes) {
          follow(bytes);
          if (tooLargeAt >= 0) {
            // The packets before the one too large are served; its bytes never reach the decoder.
            exceeded = true;
            int before = tooLargeAt - bytes.readerIndex();
            if (before > 0) {
              ctx.fireChannelRead(bytes.retainedSlice(bytes.readerIndex(), before));
            }
            bytes.release();
            ctx.fireUserEventTriggered(TOO_LARGE);
            return;
          }
        }
        ctx.fireChannelRead(msg);
        // Every packet whose last byte the decoder has had must have come out of it by now.
        if (completePackets > packetsOut && !exceeded) {
          exceeded = true;
          ctx.fireUserEventTriggered(EXCEEDED);
        }
      }
    };
  }

  /** The stage after the decoder: counts what it produced (failures included). */
  ChannelInboundHandlerAdapter packetsOut() {
    return new ChannelInboundHandlerAdapter() {
      @Override
      public void channelRead(ChannelHandlerContext ctx, Object msg) {
        packetsOut++;
        ctx.fireChannelRead(msg);
      }
    };
  }

  // MQTT 3.1.1 §2.2, MQTT 5 §2.1: one type byte, a remaining length of 1-4 bytes (7 bits each,
  // the high bit meaning "more"), then that many bytes.
  private void follow(ByteBuf bytes) {
    int at = bytes.readerIndex();
    int end = bytes.writerIndex();
    // A packet whose fixed header began in an earlier buffer begins, for this one, at its start.
    int packetStart = at;
    while (at < end && expect != Expect.NOTHING) {
      switch (expect) {
        case TYPE -> {
          packetStart = at;
          at++;
          length = 0;
          shift = 0;
          lengthBytes = 0;
          expect = Expect.LENGTH;
        }
        case LENGTH -> {
          int digit = bytes.getUnsignedByte(at++);
          length |= (digit & 0x7F) << shift;
          shift += 7;
          lengthBytes++;
          if ((digit & 0x80) == 0) {
            if (1L + lengthBytes + length > maxPacketSize) {
              tooLargeAt = packetStart;
              expect = Expect.NOTHING;
              return;
            }
            bodyLeft = length;
            expect = Expect.BODY;
            if (bodyLeft == 0) {
              completePackets++;
              expect = Expect.TYPE;
            }
          } else if (lengthBytes == 4) {
            expect = Expect.NOTHING;
          }
        }
        case BODY -> {
          long take = Math.min(bodyLeft, end - at);
          at += (int) take;
          bodyLeft -= take;
          if (bodyLeft == 0) {
            completePackets++;
            expect = Expect.TYPE;
          }
        }
        case NOTHING -> at = end;
      }
    }
  }
}
