package io.fieldline.transport.mqtt.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;

/**
 * Finds a property given twice in an MQTT 5 CONNECT. Each CONNECT property and each Will property
 * may appear once, User Property excepted (MQTT 5 §3.1.2.11, §3.1.3.2: otherwise a Protocol Error),
 * but Netty's decoder keeps only the last of a repeated property, so the repetition is visible in
 * the bytes only. This stage, before the decoder, copies the first packet's bytes up to the end of
 * its Will properties (at most {@code max-packet-size}, and only until the first packet has been
 * seen), reads the property identifiers, and records the first one repeated in the channel
 * attribute {@link #REPEATED}; the handshake refuses such a CONNECT with CONNACK 0x82. It then
 * leaves the pipeline. Bytes pass through unchanged; what does not parse is left to the decoder.
 * Confined to the channel's event loop; one per channel.
 */
public final class ConnectPropertyScan extends ChannelInboundHandlerAdapter {

  /** The identifier of the first property a CONNECT repeats; unset when none is repeated. */
  public static final AttributeKey<Integer> REPEATED =
      AttributeKey.valueOf("fieldline.mqtt.repeatedConnectProperty");

  private static final int CONNECT = 1;
  private static final int MQTT_5 = 5;
  private static final int USER_PROPERTY = 0x26;
  private static final int WILL_FLAG = 0x04;
  private static final int NEED_MORE = -2;
  private static final int DONE = -1;

  private final int maxBytes;
  private final ByteBuf head = Unpooled.buffer(64);
  private boolean finished;

  /** Copies at most {@code maxBytes} of the first packet. */
  ConnectPropertyScan(int maxBytes) {
    this.maxBytes = maxBytes;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!finished && msg instanceof ByteBuf bytes) {
      int take = Math.min(bytes.readableBytes(), maxBytes - head.writerIndex());
      head.writeBytes(bytes, bytes.readerIndex(), take);
      int repeated = scan(head);
      if (repeated != NEED_MORE || head.writerIndex() >= maxBytes) {
        finished = true;
        if (repeated >= 0) {
          ctx.channel().attr(REPEATED).set(repeated);
        }
        ctx.pipeline().remove(this);
      }
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    head.release();
  }

  /**
   * The first repeated property id of the CONNECT at the start of {@code bytes}; {@link #DONE} if
   * none is repeated or the packet is not an MQTT 5 CONNECT that parses; {@link #NEED_MORE}.
   */
  static int scan(ByteBuf bytes) {
    Reader in = new Reader(bytes);
    int result = scan(in);
    if (result == NEED_MORE && in.packetEnd >= 0 && bytes.writerIndex() >= in.packetEnd) {
      return DONE; // the whole packet is here and its lengths run past its end: for the decoder
    }
    return result;
  }

  private static int scan(Reader in) {
    int type = in.u8();
    if (type >= 0 && type >> 4 != CONNECT) {
      return DONE;
    }
    long remaining = in.varInt();
    if (remaining >= 0) {
      in.packetEnd = in.position() + remaining;
    }
    int nameLength = in.u16();
    if (nameLength >= 0 && !in.skip(nameLength)) {
      return in.result();
    }
    int level = in.u8();
    if (level >= 0 && level != MQTT_5) {
      return DONE;
    }
    int flags = in.u8();
    in.skip(2); // keep alive
    int repeated = in.properties();
    if (repeated != DONE || (flags >= 0 && (flags & WILL_FLAG) == 0)) {
      return repeated == DONE ? in.result() : repeated;
    }
    int clientIdLength = in.u16();
    if (clientIdLength >= 0) {
      in.skip(clientIdLength);
    }
    repeated = in.properties();
    return repeated == DONE ? in.result() : repeated;
  }

  /** Reads from the start of a buffer; once bytes run out, every read answers -1. */
  private static final class Reader {
    private final ByteBuf bytes;
    private int at;
    private boolean broken;
    // Where the packet ends, once its remaining length is read.
    long packetEnd = -1;
    private boolean ranOut;

    Reader(ByteBuf bytes) {
      this.bytes = bytes;
    }

    int position() {
      return at;
    }

    /** NEED_MORE if bytes ran out, DONE otherwise. */
    int result() {
      return ranOut ? NEED_MORE : DONE;
    }

    int u8() {
      if (broken || ranOut) {
        return -1;
      }
      if (at >= bytes.writerIndex()) {
        ranOut = true;
        return -1;
      }
      return bytes.getUnsignedByte(at++);
    }

    int u16() {
      int high = u8();
      int low = u8();
      return high < 0 || low < 0 ? -1 : high << 8 | low;
    }

    boolean skip(int n) {
      if (broken || ranOut) {
        return false;
      }
      if (at + (long) n > bytes.writerIndex()) {
        ranOut = true;
        return false;
      }
      at += n;
      return true;
    }

    long varInt() {
      long value = 0;
      for (int i = 0; i < 4; i++) {
        int digit = u8();
        if (digit < 0) {
          return -1;
        }
        value |= (long) (digit & 0x7F) << (7 * i);
        if ((digit & 0x80) == 0) {
          return value;
        }
      }
      broken = true;
      return -1;
    }

    /** Reads a property list: the first repeated identifier, or DONE (see result()). */
    int properties() {
      long length = varInt();
      if (length < 0) {
        return DONE;
      }
      long end = at + length;
      boolean[] seen = new boolean[128];
      while (at < end && !broken && !ranOut) {
        long id = varInt();
        if (id < 0) {
          return DONE;
        }
        if (id >= seen.length || !skipValue((int) id)) {
          broken = !ranOut;
          return DONE;
        }
        if (id != USER_PROPERTY) {
          if (seen[(int) id]) {
            return (int) id;
          }
          seen[(int) id] = true;
        }
      }
      if (at > end) {
        broken = true;
      }
      return DONE;
    }

    // MQTT 5 §2.2.2.2: the type of each property's value.
    private boolean skipValue(int id) {
      return switch (id) {
        case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A -> skip(1);
        case 0x13, 0x21, 0x22, 0x23 -> skip(2);
        case 0x02, 0x11, 0x18, 0x27 -> skip(4);
        case 0x0B -> varInt() >= 0;
        case 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F -> lengthPrefixed();
        case USER_PROPERTY -> lengthPrefixed() && lengthPrefixed();
        default -> false;
      };
    }

    private boolean lengthPrefixed() {
      int length = u16();
      return length >= 0 && skip(length);
    }
  }
}
