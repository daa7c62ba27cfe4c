package io.fieldline.dao.cassandra.telemetry.write;

import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Serialized forms of the bound values that repeat across the rows of a message (the device id, its
 * partition, its timestamp, the time to live) and across messages (key names), so that each is
 * encoded once instead of once per row: every row of a 4-key message otherwise encodes the same
 * device id four times, each through a codec look-up and a new buffer.
 *
 * <p>Each call returns a {@link ByteBuffer#duplicate() duplicate} of the cached buffer: the driver
 * only reads bound values, but a duplicate keeps one statement's reads (position changes) from ever
 * reaching another's. The last device, partition and timestamp are remembered per thread (device
 * actors run on a few dispatcher threads and write one message at a time); key names in a map of at
 * most {@link #MAX_KEYS} entries, beyond which a key is encoded on every use. Thread-safe.
 */
final class EncodedValues {

  /** Most key names kept encoded: a fleet has a few dozen; the bound covers hostile key churn. */
  static final int MAX_KEYS = 10_000;

  // The encodings of uuid, bigint, int and text are the same in every protocol version.
  private static final ProtocolVersion VERSION = ProtocolVersion.DEFAULT;

  private static final class Last {
    UUID device = new UUID(0, 0);
    ByteBuffer deviceBytes = encode(device);
    long part;
    ByteBuffer partBytes = encode(0L);
    long ts;
    ByteBuffer tsBytes = encode(0L);
  }

  private final ThreadLocal<Last> last = ThreadLocal.withInitial(Last::new);
  private final ConcurrentHashMap<String, ByteBuffer> keys = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Integer, ByteBuffer> ints = new ConcurrentHashMap<>();

  ByteBuffer device(UUID device) {
    Last cached = last.get();
    if (!cached.device.equals(device)) {
      cached.deviceBytes = encode(device);
      cached.device = device;
    }
    return cached.deviceBytes.duplicate();
  }

  ByteBuffer part(long part) {
    Last cached = last.get();
    if (cached.part != part) {
      cached.partBytes = encode(part);
      cached.part = part;
    }
    return cached.partBytes.duplicate();
  }

  ByteBuffer ts(long ts) {
    Last cached = last.get();
    if (cached.ts != ts) {
      cached.tsBytes = encode(ts);
      cached.ts = ts;
    }
    return cached.tsBytes.duplicate();
  }

  /** A small, fixed set of values (times to live): cached without bound checks. */
  ByteBuffer smallInt(int value) {
    return ints.computeIfAbsent(value, v -> TypeCodecs.INT.encodePrimitive(v, VERSION)).duplicate();
  }

  ByteBuffer key(String key) {
    ByteBuffer cached = keys.get(key);
    if (cached == null) {
      cached = TypeCodecs.TEXT.encode(key, VERSION);
      if (keys.size() < MAX_KEYS) {
        keys.putIfAbsent(key, cached);
      }
    }
    return cached.duplicate();
  }

  private static ByteBuffer encode(UUID value) {
    return TypeCodecs.UUID.encode(value, VERSION);
  }

  private static ByteBuffer encode(long value) {
    return TypeCodecs.BIGINT.encodePrimitive(value, VERSION);
  }
}
