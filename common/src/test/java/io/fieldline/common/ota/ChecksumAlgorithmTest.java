package io.fieldline.common.ota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ChecksumAlgorithmTest {

  private static final byte[] ABC = "abc".getBytes(StandardCharsets.US_ASCII);

  @Test
  void should_print_digests_as_lower_case_hex_when_computed() {
    // FIPS 180-2 / RFC 1321 test vectors.
    assertThat(ChecksumAlgorithm.MD5.of(ABC)).isEqualTo("900150983cd24fb0d6963f7d28e17f72");
    assertThat(ChecksumAlgorithm.SHA256.of(ABC))
        .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assertThat(ChecksumAlgorithm.SHA384.of(ABC)).startsWith("cb00753f45a35e8bb5a03d699ac65007");
    assertThat(ChecksumAlgorithm.SHA512.of(ABC)).startsWith("ddaf35a193617abacc417349ae204131");
  }

  @Test
  void should_print_crc32_little_endian_when_computed() {
    // CRC-32 check value of "123456789" is 0xCBF43926; ThingsBoard prints its bytes lowest first.
    assertThat(ChecksumAlgorithm.CRC32.of("123456789".getBytes(StandardCharsets.US_ASCII)))
        .isEqualTo("2639f4cb");
    assertThat(ChecksumAlgorithm.CRC32.of(new byte[0])).isEqualTo("00000000");
  }

  @Test
  void should_equal_the_one_shot_checksum_when_fed_in_pieces() {
    byte[] data = new byte[100_000];
    new Random(7).nextBytes(data);
    for (ChecksumAlgorithm algorithm : ChecksumAlgorithm.values()) {
      RunningChecksum running = algorithm.start();
      for (int offset = 0; offset < data.length; offset += 4093) {
        running.update(data, offset, Math.min(4093, data.length - offset));
      }
      assertThat(running.text()).as(algorithm.name()).isEqualTo(algorithm.of(data));
    }
  }

  @Test
  void should_read_thingsboard_names_in_any_case_when_parsed() {
    assertThat(ChecksumAlgorithm.parse("SHA256")).isEqualTo(ChecksumAlgorithm.SHA256);
    assertThat(ChecksumAlgorithm.parse("sha-256")).isEqualTo(ChecksumAlgorithm.SHA256);
    assertThat(ChecksumAlgorithm.parse(" crc32 ")).isEqualTo(ChecksumAlgorithm.CRC32);
    assertThatThrownBy(() -> ChecksumAlgorithm.parse("MURMUR3_128"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("SHA256");
  }

  @Test
  void should_ignore_hex_case_when_a_given_checksum_is_compared() {
    assertThat(ChecksumAlgorithm.same(" 2639F4CB", "2639f4cb")).isTrue();
    assertThat(ChecksumAlgorithm.same("2639f4cc", "2639f4cb")).isFalse();
  }
}
