package io.fieldline.dao.cassandra.feed;

import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The values of a feed row, in a compact binary form: a count, then per value its timestamp (for
 * telemetry), key, type and value. Strings are length-prefixed UTF-8. Nothing else reads it.
 */
final class FeedBody {

  private static final byte BOOLEAN = 1;
  private static final byte LONG = 2;
  private static final byte DOUBLE = 3;
  private static final byte STRING = 4;
  private static final byte JSON = 5;

  private FeedBody() {}

  static ByteBuffer telemetry(List<TsKvEntry> entries) {
    int size = 4;
    for (TsKvEntry entry : entries) {
      size += 8 + sizeOf(entry.kv());
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putInt(entries.size());
    for (TsKvEntry entry : entries) {
      out.putLong(entry.ts());
      put(out, entry.kv());
    }
    return out.flip();
  }

  static ByteBuffer attributes(List<KvEntry> entries) {
    int size = 4;
    for (KvEntry entry : entries) {
      size += sizeOf(entry);
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putInt(entries.size());
    for (KvEntry entry : entries) {
      put(out, entry);
    }
    return out.flip();
  }

  /** The values of a telemetry row; a corrupt body fails with IllegalArgumentException. */
  static List<TsKvEntry> readTelemetry(ByteBuffer body) {
    ByteBuffer in = body.duplicate();
    try {
      int count = count(in);
      List<TsKvEntry> entries = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        long ts = in.getLong();
        entries.add(new TsKvEntry(ts, read(in)));
      }
      return entries;
    } catch (BufferUnderflowException e) {
      throw truncated(e);
    }
  }

  /** The values of an attributes row; a corrupt body fails with IllegalArgumentException. */
  static List<KvEntry> readAttributes(ByteBuffer body) {
    ByteBuffer in = body.duplicate();
    try {
      int count = count(in);
      List<KvEntry> entries = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        entries.add(read(in));
      }
      return entries;
    } catch (BufferUnderflowException e) {
      throw truncated(e);
    }
  }

  // A body cut short anywhere, the count and a telemetry timestamp included.
  private static IllegalArgumentException truncated(BufferUnderflowException e) {
    return new IllegalArgumentException("corrupt feed row: truncated", e);
  }

  private static int count(ByteBuffer in) {
    int count = in.getInt();
    if (count < 0 || count > in.remaining()) {
      throw new IllegalArgumentException("corrupt feed row: " + count + " values");
    }
    return count;
  }

  private static int sizeOf(KvEntry kv) {
    int size = 4 + utf8Length(kv.key()) + 1;
    if (kv instanceof KvEntry.BooleanKv) {
      return size + 1;
    }
    if (kv instanceof KvEntry.LongKv || kv instanceof KvEntry.DoubleKv) {
      return size + 8;
    }
    return size + 4 + utf8Length(text(kv));
  }

  private static void put(ByteBuffer out, KvEntry kv) {
    putString(out, kv.key());
    if (kv instanceof KvEntry.BooleanKv b) {
      out.put(BOOLEAN).put((byte) (b.bool() ? 1 : 0));
    } else if (kv instanceof KvEntry.LongKv l) {
      out.put(LONG).putLong(l.number());
    } else if (kv instanceof KvEntry.DoubleKv d) {
      out.put(DOUBLE).putDouble(d.number());
    } else {
      putString(out.put(kv instanceof KvEntry.JsonKv ? JSON : STRING), text(kv));
    }
  }

  private static String text(KvEntry kv) {
    return kv instanceof KvEntry.JsonKv j ? j.json() : ((KvEntry.StringKv) kv).text();
  }

  private static KvEntry read(ByteBuffer in) {
    String key = getString(in);
    byte type = in.get();
    return switch (type) {
      case BOOLEAN -> KvEntry.of(key, in.get() != 0);
      case LONG -> KvEntry.of(key, in.getLong());
      case DOUBLE -> KvEntry.of(key, in.getDouble());
      case STRING -> KvEntry.of(key, getString(in));
      case JSON -> KvEntry.json(key, getString(in));
      default -> throw new IllegalArgumentException("corrupt feed row: value type " + type);
    };
  }

  private static void putString(ByteBuffer out, String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    out.putInt(bytes.length).put(bytes);
  }

  private static String getString(ByteBuffer in) {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("corrupt feed row: string of " + length + " bytes");
    }
    byte[] bytes = new byte[length];
    in.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  // Exact UTF-8 length without encoding twice for ASCII keys and values (the common case).
  private static int utf8Length(String text) {
    int length = text.length();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0x80) {
        return text.getBytes(StandardCharsets.UTF_8).length;
      }
    }
    return length;
  }
}
