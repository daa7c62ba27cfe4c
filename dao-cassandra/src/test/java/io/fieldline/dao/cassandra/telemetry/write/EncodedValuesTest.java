package io.fieldline.dao.cassandra.telemetry.write;

import static org.assertj.core.api.Assertions.assertThat;

import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import java.nio.ByteBuffer;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class EncodedValuesTest {

  private static final ProtocolVersion V4 = ProtocolVersion.V4;

  private final EncodedValues encoded = new EncodedValues();

  @Test
  void should_encode_like_the_driver_codecs_when_values_change_between_calls() {
    UUID first = UUID.randomUUID();
    UUID second = UUID.randomUUID();

    assertThat(encoded.device(first)).isEqualTo(TypeCodecs.UUID.encode(first, V4));
    assertThat(encoded.device(second)).isEqualTo(TypeCodecs.UUID.encode(second, V4));
    assertThat(encoded.device(first)).isEqualTo(TypeCodecs.UUID.encode(first, V4));
    assertThat(encoded.part(1_700_000_000_000L))
        .isEqualTo(TypeCodecs.BIGINT.encodePrimitive(1_700_000_000_000L, V4));
    assertThat(encoded.part(-5)).isEqualTo(TypeCodecs.BIGINT.encodePrimitive(-5, V4));
    assertThat(encoded.ts(0)).isEqualTo(TypeCodecs.BIGINT.encodePrimitive(0, V4));
    assertThat(encoded.ts(42)).isEqualTo(TypeCodecs.BIGINT.encodePrimitive(42, V4));
    assertThat(encoded.smallInt(86_400)).isEqualTo(TypeCodecs.INT.encodePrimitive(86_400, V4));
    assertThat(encoded.key("température")).isEqualTo(TypeCodecs.TEXT.encode("température", V4));
  }

  @Test
  void should_hand_out_independent_buffers_when_the_same_value_is_asked_twice() {
    UUID device = UUID.randomUUID();
    ByteBuffer one = encoded.device(device);
    one.position(one.limit()); // a reader consumed it

    ByteBuffer two = encoded.device(device);

    assertThat(two.remaining()).isEqualTo(16);
    assertThat(encoded.key("k").remaining()).isEqualTo(1);
  }

  @Test
  void should_keep_encoding_correctly_when_more_keys_than_the_cache_holds_are_seen() {
    for (int i = 0; i < EncodedValues.MAX_KEYS + 10; i++) {
      encoded.key("key-" + i);
    }

    String late = "key-" + (EncodedValues.MAX_KEYS + 5);
    assertThat(encoded.key(late)).isEqualTo(TypeCodecs.TEXT.encode(late, V4));
  }
}
