package io.fieldline.cluster;

/**
 * MurmurHash3, x64 128-bit variant with seed 0 (Austin Appleby's public-domain algorithm), reduced
 * to its first 64 bits. Stable across JVMs and versions, unlike {@code hashCode()}: every node must
 * place devices and virtual nodes at the same ring positions. Stateless.
 */
final class Murmur3 {

  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;

  private Murmur3() {}

  /** The first 64 bits of MurmurHash3_x64_128(data, seed 0). */
  static long hash64(byte[] data) {
    int length = data.length;
    long h1 = 0;
    long h2 = 0;
    int blocks = length / 16;
    for (int i = 0; i < blocks; i++) {
      long k1 = littleEndianLong(data, i * 16);
      long k2 = littleEndianLong(data, i * 16 + 8);
      h1 ^= mixK1(k1);
      h1 = Long.rotateLeft(h1, 27);
      h1 += h2;
      h1 = h1 * 5 + 0x52dce729;
      h2 ^= mixK2(k2);
      h2 = Long.rotateLeft(h2, 31);
      h2 += h1;
      h2 = h2 * 5 + 0x38495ab5;
    }
    int tail = blocks * 16;
    int remaining = length - tail;
    long k1 = 0;
    long k2 = 0;
    for (int i = remaining - 1; i >= 8; i--) {
      k2 ^= (data[tail + i] & 0xffL) << ((i - 8) * 8);
    }
    for (int i = Math.min(remaining, 8) - 1; i >= 0; i--) {
      k1 ^= (data[tail + i] & 0xffL) << (i * 8);
    }
    if (remaining > 8) {
      h2 ^= mixK2(k2);
    }
    if (remaining > 0) {
      h1 ^= mixK1(k1);
    }
    h1 ^= length;
    h2 ^= length;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    return h1;
  }

  private static long mixK1(long k1) {
    k1 *= C1;
    k1 = Long.rotateLeft(k1, 31);
    return k1 * C2;
  }

  private static long mixK2(long k2) {
    k2 *= C2;
    k2 = Long.rotateLeft(k2, 33);
    return k2 * C1;
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  private static long littleEndianLong(byte[] data, int offset) {
    long value = 0;
    for (int i = 7; i >= 0; i--) {
      value = (value << 8) | (data[offset + i] & 0xffL);
    }
    return value;
  }
}
