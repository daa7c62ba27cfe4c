package io.fieldline.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Our MurmurHash3 against Guava's (on the test classpath through gRPC) as the oracle. */
class Murmur3Test {

  @Test
  @SuppressWarnings("UnstableApiUsage")
  void should_equal_guava_murmur3_128_first_long_when_hashing_any_length() {
    Random random = new Random(42);
    for (int length = 0; length <= 80; length++) {
      for (int round = 0; round < 20; round++) {
        byte[] data = new byte[length];
        random.nextBytes(data);
        long expected = Hashing.murmur3_128().hashBytes(data).asLong();
        assertThat(Murmur3.hash64(data)).as("length %d", length).isEqualTo(expected);
      }
    }
  }

  @Test
  void should_give_stable_values_when_hashing_known_strings() {
    // Pinned: a change here moves every device of every cluster to another node.
    assertThat(Murmur3.hash64("node-a#0".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo(Hashing.murmur3_128().hashString("node-a#0", StandardCharsets.UTF_8).asLong());
    assertThat(Murmur3.hash64(new byte[0])).isZero();
  }
}
