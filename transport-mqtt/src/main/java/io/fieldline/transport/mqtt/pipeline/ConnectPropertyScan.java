package io.fieldline.transport.mqtt.pipeline;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;

/**
 * Finds a property given twice in an MQTT 5 CONNECT. Each CONNECT property and each Will property
 * may appear once, User Property excepted (MQTT 5 §3.1.2.11, §3.1.3.2: otherwise a Protocol Error),
 * but Netty's decoder keeps only the last of a repeated property, so the repetition is visible in
 * the bytes only. This stage, before the decoder, follows the first packet's bytes as they pass —
 * without copying them: a few counters, however the packet is split into reads — up to the end of
 * its Will properties, and records the first property id repeated in the channel attribute {@link
 * #REPEATED}; the handshake refuses such a CONNECT with CONNACK 0x82. It then leaves the pipeline.
 * Bytes pass through unchanged; what does not parse is left to the decoder. Confined to the
 * channel's event loop; one per channel.
 */
public final class ConnectPropertyScan extends ChannelInboundHandlerAdapter {

  /** The identifier of the first property a CONNECT repeats; unset when none is repeated. */
  public static final AttributeKey<Integer> REPEATED =
      AttributeKey.valueOf("fieldline.mqtt.repeatedConnectProperty");

  private static final int CONNECT = 1;
  private static final int MQTT_5 = 5;
  private static final int WILL_FLAG = 0x04;
  private static final int USER_PROPERTY = 0x26;

  /** What the next bytes are. */
  private enum Step {
    TYPE,
    REMAINING_LENGTH,
    NAME_LENGTH,
    LEVEL,
    FLAGS,
    KEEP_ALIVE,
    PROPERTIES_LENGTH,
    PROPERTY_ID,
    /** A varint property value (Subscription Identifier), read and dropped. */
    VARINT_VALUE,
    /** The two-byte length of a string, binary or string-pair value. */
    VALUE_LENGTH,
    CLIENT_ID_LENGTH,
    /** Bytes skipped; then {@link #afterSkip}. */
    SKIP,
    FINISHED
  }

  private Step step = Step.TYPE;
  private Step afterSkip = Step.FINISHED;
  private long number;
  private int numberBytes;
  private long toSkip;
  private long packetLeft = Long.MAX_VALUE;
  // Bytes left in the property list being read; negative outside one.
  private long propertiesLeft = -1;
  private boolean will;
  private boolean inWill;
  // A string pair (User Property) has two length-prefixed strings.
  private int stringsLeft;
  private boolean[] seen = new boolean[128];
  private int repeated = -1;

  ConnectPropertyScan() {}

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (step != Step.FINISHED && msg instanceof ByteBuf bytes) {
      follow(bytes);
      if (step == Step.FINISHED) {
        if (repeated >= 0) {
          ctx.channel().attr(REPEATED).set(repeated);
        }
        ctx.pipeline().remove(this);
      }
    }
    ctx.fireChannelRead(msg);
  }

  private void follow(ByteBuf bytes) {
    int at = bytes.readerIndex();
    int end = bytes.writerIndex();
    while (at < end && step != Step.FINISHED) {
      if (step == Step.SKIP) {
        int n = (int) Math.min(toSkip, end - at);
        at += n;
        toSkip -= n;
        consumed(n);
        if (toSkip == 0 && step != Step.FINISHED) {
          next(afterSkip);
        }
        continue;
      }
      int b = bytes.getUnsignedByte(at++);
      if (step != Step.TYPE && step != Step.REMAINING_LENGTH) {
        consumed(1);
      }
      onByte(b);
    }
  }

  private void onByte(int b) {
    switch (step) {
      case TYPE -> {
        if (b >> 4 != CONNECT) {
          finish();
        } else {
          step = Step.REMAINING_LENGTH;
        }
      }
      case REMAINING_LENGTH -> {
        if (varInt(b)) {
          packetLeft = number;
          fixed(Step.NAME_LENGTH);
        }
      }
      case NAME_LENGTH -> {
        if (twoBytes(b)) {
          skip(number, Step.LEVEL);
        }
      }
      case LEVEL -> {
        if (b != MQTT_5) {
          finish();
        } else {
          step = Step.FLAGS;
        }
      }
      case FLAGS -> {
        will = (b & WILL_FLAG) != 0;
        fixed(Step.KEEP_ALIVE);
      }
      case KEEP_ALIVE -> {
        if (twoBytes(b)) {
          fixed(Step.PROPERTIES_LENGTH);
        }
      }
      case PROPERTIES_LENGTH -> {
        if (varInt(b)) {
          seen = new boolean[seen.length];
          propertiesLeft = number;
          nextProperty();
        }
      }
      case PROPERTY_ID -> {
        if (varInt(b)) {
          onProperty(number);
        }
      }
      case VARINT_VALUE -> {
        if (varInt(b)) {
          nextProperty();
        }
      }
      case VALUE_LENGTH -> {
        if (twoBytes(b)) {
          stringsLeft--;
          skip(number, stringsLeft > 0 ? Step.VALUE_LENGTH : Step.PROPERTY_ID);
        }
      }
      case CLIENT_ID_LENGTH -> {
        if (twoBytes(b)) {
          inWill = true;
          skip(number, Step.PROPERTIES_LENGTH);
        }
      }
      default -> finish();
    }
  }

  // MQTT 5 §2.2.2.2: the type of each property's value decides how many bytes it takes.
  private void onProperty(long id) {
    if (id >= seen.length) {
      finish(); // not a property: the decoder refuses it
      return;
    }
    int property = (int) id;
    if (property != USER_PROPERTY) {
      if (seen[property]) {
        repeated = property;
        finish();
        return;
      }
      seen[property] = true;
    }
    switch (property) {
      case 0x01, 0x17, 0x19, 0x24, 0x25, 0x28, 0x29, 0x2A -> skip(1, Step.PROPERTY_ID);
      case 0x13, 0x21, 0x22, 0x23 -> skip(2, Step.PROPERTY_ID);
      case 0x02, 0x11, 0x18, 0x27 -> skip(4, Step.PROPERTY_ID);
      case 0x0B -> fixed(Step.VARINT_VALUE);
      case 0x03, 0x08, 0x09, 0x12, 0x15, 0x16, 0x1A, 0x1C, 0x1F -> {
        stringsLeft = 1;
        fixed(Step.VALUE_LENGTH);
      }
      case USER_PROPERTY -> {
        stringsLeft = 2;
        fixed(Step.VALUE_LENGTH);
      }
      default -> finish();
    }
  }

  // Where the bytes go after a skip or a value: a property id starts the next property, unless
  // the list has ended.
  private void next(Step following) {
    if (following == Step.PROPERTY_ID) {
      nextProperty();
    } else {
      fixed(following);
    }
  }

  private void nextProperty() {
    if (propertiesLeft > 0) {
      fixed(Step.PROPERTY_ID);
      return;
    }
    if (propertiesLeft < 0) {
      finish(); // a property ran past its list: the decoder refuses it
      return;
    }
    propertiesLeft = -1;
    if (will && !inWill) {
      fixed(Step.CLIENT_ID_LENGTH);
    } else {
      finish();
    }
  }

  private void consumed(int n) {
    packetLeft -= n;
    if (propertiesLeft >= 0) {
      propertiesLeft -= n;
    }
    if (packetLeft < 0) {
      finish(); // past the packet: the decoder refuses it
    }
  }

  private void fixed(Step next) {
    number = 0;
    numberBytes = 0;
    step = next;
  }

  private void skip(long n, Step then) {
    afterSkip = then;
    if (n == 0) {
      next(then);
    } else {
      toSkip = n;
      step = Step.SKIP;
    }
  }

  private boolean twoBytes(int b) {
    number = number << 8 | b;
    return ++numberBytes == 2;
  }

  // MQTT 5 §1.5.5: 7 bits per byte, least significant first, at most four bytes.
  private boolean varInt(int b) {
    number |= (long) (b & 0x7F) << (7 * numberBytes);
    numberBytes++;
    if ((b & 0x80) == 0) {
      return true;
    }
    if (numberBytes == 4) {
      finish(); // the decoder refuses it
    }
    return false;
  }

  private void finish() {
    step = Step.FINISHED;
  }
}
