package io.fieldline.common.ota;

import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.zip.CRC32;

/**
 * A checksum being computed over bytes fed in order ({@link ChecksumAlgorithm#start()}), so that a
 * package's data is checked while it streams through, never held whole. Not thread-safe: one upload
 * feeds it.
 */
public abstract sealed class RunningChecksum {

  private static final HexFormat HEX = HexFormat.of();

  private RunningChecksum() {}

  /** Feeds {@code length} bytes of {@code bytes} from {@code offset}. */
  public abstract void update(byte[] bytes, int offset, int length);

  /** The checksum of every byte fed so far, in ThingsBoard's text form; ends the computation. */
  public abstract String text();

  static final class Digest extends RunningChecksum {
    private final MessageDigest digest;

    Digest(MessageDigest digest) {
      this.digest = digest;
    }

    @Override
    public void update(byte[] bytes, int offset, int length) {
      digest.update(bytes, offset, length);
    }

    @Override
    public String text() {
      return HEX.formatHex(digest.digest());
    }
  }

  static final class Crc extends RunningChecksum {
    private final CRC32 crc = new CRC32();

    @Override
    public void update(byte[] bytes, int offset, int length) {
      crc.update(bytes, offset, length);
    }

    // The 32-bit value's bytes lowest first: ThingsBoard prints CRC32 checksums this way.
    @Override
    public String text() {
      int value = (int) crc.getValue();
      byte[] littleEndian = {
        (byte) value, (byte) (value >>> 8), (byte) (value >>> 16), (byte) (value >>> 24)
      };
      return HEX.formatHex(littleEndian);
    }
  }
}
