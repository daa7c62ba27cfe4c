package io.fieldline.dao.cassandra.feed;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The feed row's binary form: what is written is read back, and a corrupt body is refused. */
class FeedBodyTest {

  private static final List<KvEntry> EVERY_TYPE =
      List.of(
          KvEntry.of("on", true),
          KvEntry.of("off", false),
          KvEntry.of("count", Long.MIN_VALUE),
          KvEntry.of("max", Long.MAX_VALUE),
          KvEntry.of("temp", -21.5),
          KvEntry.of("nan", Double.NaN),
          KvEntry.of("inf", Double.NEGATIVE_INFINITY),
          KvEntry.of("name", "pump 7"),
          KvEntry.of("blank", ""),
          KvEntry.json("cfg", "{\"a\":[1,2,{\"b\":null}]}"));

  private static List<TsKvEntry> telemetry(List<KvEntry> values) {
    List<TsKvEntry> out = new ArrayList<>();
    long ts = 1_700_000_000_000L;
    for (KvEntry value : values) {
      out.add(new TsKvEntry(ts++, value));
    }
    out.add(new TsKvEntry(0L, KvEntry.of("epoch", 1L)));
    out.add(new TsKvEntry(-5L, KvEntry.of("before epoch", 2L)));
    return out;
  }

  @Test
  void should_read_back_every_value_type_when_written_as_telemetry() {
    List<TsKvEntry> values = telemetry(EVERY_TYPE);

    assertThat(FeedBody.readTelemetry(FeedBody.telemetry(values))).isEqualTo(values);
  }

  @Test
  void should_read_back_every_value_type_when_written_as_attributes() {
    assertThat(FeedBody.readAttributes(FeedBody.attributes(EVERY_TYPE))).isEqualTo(EVERY_TYPE);
  }

  @Test
  void should_read_back_unicode_keys_and_strings_when_they_are_not_ascii() {
    List<KvEntry> values =
        List.of(
            KvEntry.of("température", "23 °C"),
            KvEntry.of("压力", "高"),
            KvEntry.of("emoji 🚀", "🌡️ \u0000 nul inside"),
            KvEntry.json("ключ", "{\"значение\":\"𝄞\"}"));

    assertThat(FeedBody.readAttributes(FeedBody.attributes(values))).isEqualTo(values);
    assertThat(FeedBody.readTelemetry(FeedBody.telemetry(telemetry(values))))
        .isEqualTo(telemetry(values));
  }

  @Test
  void should_allocate_exactly_the_encoded_size_when_strings_are_multibyte() {
    // The size is computed before writing: a wrong UTF-8 length would overflow the buffer or
    // leave trailing bytes.
    ByteBuffer body = FeedBody.attributes(List.of(KvEntry.of("ü", "🚀🚀")));

    assertThat(body.remaining()).isEqualTo(4 + (4 + 2 + 1) + (4 + 8));
    assertThat(body.capacity()).isEqualTo(body.remaining());
  }

  @Test
  void should_read_back_empty_lists_when_there_are_no_values() {
    assertThat(FeedBody.readTelemetry(FeedBody.telemetry(List.of()))).isEmpty();
    assertThat(FeedBody.readAttributes(FeedBody.attributes(List.of()))).isEmpty();
  }

  @Test
  void should_leave_the_buffer_position_alone_when_reading() {
    ByteBuffer body = FeedBody.attributes(EVERY_TYPE);
    int position = body.position();

    FeedBody.readAttributes(body);

    assertThat(body.position()).isEqualTo(position);
    assertThat(FeedBody.readAttributes(body)).isEqualTo(EVERY_TYPE);
  }

  @Test
  void should_refuse_with_illegal_argument_when_the_body_is_shorter_than_its_count() {
    assertThatThrownBy(() -> FeedBody.readTelemetry(ByteBuffer.allocate(0)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> FeedBody.readAttributes(ByteBuffer.wrap(new byte[] {0, 0})))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_refuse_with_illegal_argument_when_a_telemetry_timestamp_is_cut_short() {
    // Count 1, then only 3 of the timestamp's 8 bytes.
    ByteBuffer body = ByteBuffer.allocate(7).putInt(1).put(new byte[3]).flip();

    assertThatThrownBy(() -> FeedBody.readTelemetry(body))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void should_refuse_with_illegal_argument_when_any_prefix_of_a_valid_body_is_read() {
    ByteBuffer telemetry = FeedBody.telemetry(telemetry(EVERY_TYPE));
    ByteBuffer attributes = FeedBody.attributes(EVERY_TYPE);
    for (int length = 0; length < telemetry.remaining(); length++) {
      ByteBuffer cut = telemetry.duplicate().limit(length);
      assertThatThrownBy(() -> FeedBody.readTelemetry(cut))
          .as("telemetry cut to %d bytes", length)
          .isInstanceOf(IllegalArgumentException.class);
    }
    for (int length = 0; length < attributes.remaining(); length++) {
      ByteBuffer cut = attributes.duplicate().limit(length);
      assertThatThrownBy(() -> FeedBody.readAttributes(cut))
          .as("attributes cut to %d bytes", length)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void should_refuse_without_allocating_when_a_length_prefix_is_huge() {
    ByteBuffer hugeCount = ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).flip();
    ByteBuffer negativeCount = ByteBuffer.allocate(8).putInt(-1).flip();
    // One value whose key claims 2 GiB.
    ByteBuffer hugeKey = ByteBuffer.allocate(16).putInt(1).putInt(Integer.MAX_VALUE).flip();
    ByteBuffer negativeKey = ByteBuffer.allocate(16).putInt(1).putInt(-7).flip();
    // A string value claiming 2 GiB after a valid key and type.
    ByteBuffer hugeString =
        ByteBuffer.allocate(32)
            .putInt(1)
            .putInt(1)
            .put((byte) 'k')
            .put((byte) 4)
            .putInt(Integer.MAX_VALUE - 3)
            .flip();

    for (ByteBuffer body : List.of(hugeCount, negativeCount, hugeKey, negativeKey, hugeString)) {
      assertThatThrownBy(() -> FeedBody.readAttributes(body))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> FeedBody.readTelemetry(body))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  void should_refuse_with_illegal_argument_when_the_value_type_is_unknown() {
    ByteBuffer body =
        ByteBuffer.allocate(16).putInt(1).putInt(1).put((byte) 'k').put((byte) 9).flip();

    assertThatThrownBy(() -> FeedBody.readAttributes(body))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("value type 9");
  }

  @Test
  void should_fail_only_with_illegal_argument_when_bytes_are_flipped_at_random() {
    ByteBuffer valid = FeedBody.telemetry(telemetry(EVERY_TYPE));
    byte[] original = new byte[valid.remaining()];
    valid.duplicate().get(original);
    Random random = new Random(28);
    int refused = 0;
    for (int i = 0; i < 5_000; i++) {
      byte[] bytes = original.clone();
      for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
        bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
      }
      ByteBuffer body = ByteBuffer.wrap(bytes, 0, random.nextInt(bytes.length + 1));
      try {
        FeedBody.readTelemetry(body);
        FeedBody.readAttributes(body);
      } catch (IllegalArgumentException expected) {
        refused++;
      }
    }
    assertThat(refused).as("most corrupt bodies are refused").isGreaterThan(1_000);
  }
}
