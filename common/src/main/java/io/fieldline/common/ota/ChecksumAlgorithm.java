package io.fieldline.common.ota;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Locale;

/**
 * The checksums ThingsBoard computes over a package's data, by its names. Digests come from the
 * JDK's {@link MessageDigest}, CRC32 from {@link java.util.zip.CRC32}; nothing is hand-rolled. The
 * text form is ThingsBoard's, so its devices verify what they download unchanged: lower-case hex of
 * the digest's bytes, and for CRC32 of the four bytes of the value in little-endian order (the form
 * ThingsBoard's hashing library prints and its device SDKs compare against). ThingsBoard's
 * MURMUR3_32 and MURMUR3_128 are not offered.
 */
public enum ChecksumAlgorithm {
  MD5("MD5"),
  SHA256("SHA-256"),
  SHA384("SHA-384"),
  SHA512("SHA-512"),
  CRC32("");

  private final String jdkName;

  ChecksumAlgorithm(String jdkName) {
    this.jdkName = jdkName;
  }

  /** A new running checksum of this algorithm, over no bytes yet. Not thread-safe. */
  public RunningChecksum start() {
    if (this == CRC32) {
      return new RunningChecksum.Crc();
    }
    try {
      return new RunningChecksum.Digest(MessageDigest.getInstance(jdkName));
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform must provide MD5 and SHA-256/384/512 (MessageDigest's Javadoc).
      throw new IllegalStateException(jdkName + " missing from this JVM", e);
    }
  }

  /** The checksum of {@code data} in this algorithm's text form. */
  public String of(byte[] data) {
    RunningChecksum checksum = start();
    checksum.update(data, 0, data.length);
    return checksum.text();
  }

  /**
   * The algorithm named {@code name}, ignoring case and a dash ({@code sha256}, {@code SHA-256}).
   *
   * @throws IllegalArgumentException naming the supported algorithms
   */
  public static ChecksumAlgorithm parse(String name) {
    String wanted = name.strip().toUpperCase(Locale.ROOT).replace("-", "");
    for (ChecksumAlgorithm algorithm : values()) {
      if (algorithm.name().equals(wanted)) {
        return algorithm;
      }
    }
    throw new IllegalArgumentException(
        "checksumAlgorithm must be one of " + Arrays.toString(values()) + ", got '" + name + "'");
  }

  /** Whether {@code given} (a client's checksum) is {@code computed}: hex case is ignored. */
  public static boolean same(String given, String computed) {
    return given.strip().equalsIgnoreCase(computed);
  }
}
