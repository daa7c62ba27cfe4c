package io.fieldline.transport.common.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.NameRules;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.kv.TimestampRange;
import io.fieldline.common.kv.TsKvEntry;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PayloadParserTest {

  private static final long NOW = 1_700_000_000_000L;
  private final PayloadParser parser = PayloadParser.defaults();

  private List<TsKvEntry> telemetry(String json) {
    return parser.parseTelemetry(json.getBytes(StandardCharsets.UTF_8), NOW);
  }

  private List<KvEntry> attributes(String json) {
    return parser.parseAttributes(json.getBytes(StandardCharsets.UTF_8));
  }

  private static TsKvEntry at(long ts, KvEntry kv) {
    return new TsKvEntry(ts, kv);
  }

  @Nested
  class Forms {

    @Test
    void should_stamp_values_with_receive_time_when_payload_is_a_plain_object() {
      assertThat(telemetry("{\"temperature\":21.5,\"humidity\":40}"))
          .containsExactly(
              at(NOW, KvEntry.of("temperature", 21.5)), at(NOW, KvEntry.of("humidity", 40L)));
    }

    @Test
    void should_merge_objects_when_payload_is_an_array_of_plain_objects() {
      assertThat(telemetry("[{\"temperature\":21.5},{\"humidity\":40}]"))
          .containsExactly(
              at(NOW, KvEntry.of("temperature", 21.5)), at(NOW, KvEntry.of("humidity", 40L)));
    }

    @Test
    void should_use_device_timestamp_when_object_has_ts_and_values() {
      assertThat(telemetry("{\"ts\":1451649600512,\"values\":{\"temperature\":21.5}}"))
          .containsExactly(at(1451649600512L, KvEntry.of("temperature", 21.5)));
    }

    @Test
    void should_keep_each_timestamp_when_payload_is_an_array_of_timestamped_objects() {
      assertThat(telemetry("[{\"ts\":1,\"values\":{\"a\":1}},{\"ts\":2,\"values\":{\"a\":2}}]"))
          .containsExactly(at(1, KvEntry.of("a", 1L)), at(2, KvEntry.of("a", 2L)));
    }

    @Test
    void should_use_device_timestamp_whatever_the_field_order_and_ignore_other_fields() {
      assertThat(telemetry("{\"values\":{\"a\":{\"b\":[1,2]},\"c\":\"7\"},\"x\":9,\"ts\":1.0e3}"))
          .containsExactly(
              at(1000, KvEntry.json("a", "{\"b\":[1,2]}")), at(1000, KvEntry.of("c", 7L)));
    }

    @Test
    void should_keep_nested_values_as_json_text_when_the_object_is_plain() {
      assertThat(telemetry("{\"values\":{\"a\":1},\"n\":[true,null],\"big\":18446744073709551616}"))
          .containsExactly(
              at(NOW, KvEntry.json("values", "{\"a\":1}")),
              at(NOW, KvEntry.json("n", "[true,null]")),
              at(NOW, KvEntry.of("big", 1.8446744073709552E19)));
    }

    @Test
    void should_keep_a_values_object_as_compact_json_in_place_when_other_text_precedes_it() {
      // Multi-byte characters before and inside the object, spaces around it: the object's text
      // is cut from the payload's bytes only for this plain form.
      assertThat(telemetry("{\"x\":\"é€\", \"values\" : { \"a\" : \"ü\" , \"b\":[1] } ,\"n\":1}"))
          .containsExactly(
              at(NOW, KvEntry.of("x", "é€")),
              at(NOW, KvEntry.json("values", "{\"a\":\"ü\",\"b\":[1]}")),
              at(NOW, KvEntry.of("n", 1L)));
    }

    @Test
    void should_check_the_values_inside_values_only_when_the_object_is_timestamped() {
      // Without ts, "values" is one nested value: kept as JSON text, its inner keys unchecked,
      // like any other nested object.
      assertThat(telemetry("{\"values\":{\"\":1,\"ok\":2}}"))
          .containsExactly(at(NOW, KvEntry.json("values", "{\"\":1,\"ok\":2}")));
      assertThatThrownBy(() -> telemetry("{\"ts\":1,\"values\":{\"\":1,\"ok\":2}}"))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("keys must not be empty");
    }

    @Test
    void should_read_both_forms_when_the_payload_is_utf_16() {
      byte[] plain = "{\"values\":{\"a\":1}}".getBytes(StandardCharsets.UTF_16LE);
      byte[] stamped = "{\"ts\":5,\"values\":{\"a\":1}}".getBytes(StandardCharsets.UTF_16BE);

      assertThat(parser.parseTelemetry(plain, NOW))
          .containsExactly(at(NOW, KvEntry.json("values", "{\"a\":1}")));
      assertThat(parser.parseTelemetry(stamped, NOW)).containsExactly(at(5, KvEntry.of("a", 1L)));
    }

    @Test
    void should_keep_the_last_value_of_a_duplicate_key_in_its_first_place_as_thingsboard_does() {
      assertThat(telemetry("{\"a\":1,\"b\":2,\"a\":3}"))
          .containsExactly(at(NOW, KvEntry.of("a", 3L)), at(NOW, KvEntry.of("b", 2L)));
      assertThat(telemetry("{\"ts\":7,\"values\":{\"t\":1,\"t\":2},\"ts\":8}"))
          .containsExactly(at(8, KvEntry.of("t", 2L)));
      assertThat(telemetry("[{\"ts\":7,\"values\":{\"t\":1}},{\"ts\":7,\"values\":{\"t\":2}}]"))
          .containsExactly(at(7, KvEntry.of("t", 2L)));
      assertThatThrownBy(() -> telemetry("{\"values\":{\"x\":1},\"values\":5,\"ts\":1}"))
          .as("the later values, a number, wins: the timestamped form is invalid")
          .hasMessageContaining("values must be a JSON object");
      assertThat(telemetry("{\"o\":{\"k\":1,\"k\":2}}"))
          .containsExactly(at(NOW, KvEntry.json("o", "{\"k\":2}")));
      assertThat(attributes("{\"fw\":\"1.0\",\"fw\":\"v2\"}"))
          .containsExactly(KvEntry.of("fw", "v2"));
      StringBuilder many = new StringBuilder("{");
      for (int i = 0; i < 20; i++) {
        many.append("\"k").append(i).append("\":").append(i).append(',');
      }
      many.append("\"k3\":99}");
      List<TsKvEntry> parsed = telemetry(many.toString());
      assertThat(parsed).hasSize(20).contains(at(NOW, KvEntry.of("k3", 99L)));
      assertThat(parsed.get(3)).isEqualTo(at(NOW, KvEntry.of("k3", 99L)));
    }

    @Test
    void should_stream_values_in_order_when_timestamped_in_an_array() {
      assertThat(
              telemetry(
                  "[{\"ts\":7,\"values\":{\"é\":\"1.5\",\"b\":true,\"c\":null}},"
                      + "{\"values\":{\"d\":{}},\"ts\":8}]"))
          .containsExactly(
              at(7, KvEntry.of("é", 1.5)),
              at(7, KvEntry.of("b", true)),
              at(8, KvEntry.json("d", "{}")));
    }

    @Test
    void should_treat_ts_as_a_value_when_values_is_missing() {
      assertThat(telemetry("{\"ts\":5,\"t\":1}"))
          .containsExactly(at(NOW, KvEntry.of("ts", 5L)), at(NOW, KvEntry.of("t", 1L)));
    }

    @Test
    void should_return_nothing_when_object_is_empty() {
      assertThat(telemetry("{}")).isEmpty();
    }
  }

  @Nested
  class Typing {

    @Test
    void should_type_booleans_longs_doubles_strings_and_json() {
      assertThat(
              telemetry(
                  "{\"b\":true,\"l\":42,\"d\":4.2,\"s\":\"on\",\"o\":{\"x\":[1,2]},\"a\":[1]}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(
              KvEntry.of("b", true),
              KvEntry.of("l", 42L),
              KvEntry.of("d", 4.2),
              KvEntry.of("s", "on"),
              KvEntry.json("o", "{\"x\":[1,2]}"),
              KvEntry.json("a", "[1]"));
    }

    @Test
    void should_keep_a_double_when_number_is_written_with_a_fraction() {
      assertThat(telemetry("{\"d\":21.0}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(KvEntry.of("d", 21.0));
    }

    @Test
    void should_fall_back_to_double_when_integer_exceeds_64_bits() {
      assertThat(telemetry("{\"big\":123456789012345678901234567890}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(KvEntry.of("big", 1.2345678901234568E29));
    }

    @Test
    void should_cast_numeric_strings_when_type_cast_is_on() {
      assertThat(telemetry("{\"l\":\"42\",\"d\":\"4.5\",\"e\":\"1e3\",\"s\":\"4x\"}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(
              KvEntry.of("l", 42L),
              KvEntry.of("d", 4.5),
              KvEntry.of("e", 1000.0),
              KvEntry.of("s", "4x"));
    }

    @Test
    void should_keep_numeric_strings_when_type_cast_is_off() {
      PayloadParser strict = new PayloadParser(false, 0);
      assertThat(strict.parseTelemetry("{\"l\":\"42\"}".getBytes(StandardCharsets.UTF_8), NOW))
          .extracting(TsKvEntry::kv)
          .containsExactly(KvEntry.of("l", "42"));
    }

    @Test
    void should_skip_null_values() {
      assertThat(telemetry("{\"a\":null,\"b\":1}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(KvEntry.of("b", 1L));
    }
  }

  @Nested
  class BadInput {

    @ParameterizedTest
    @ValueSource(
        strings = {
          "",
          "{",
          "not json",
          "{\"a\":1,}",
          "42",
          "\"text\"",
          "true",
          "[1,2]",
          "{\"ts\":\"yesterday\",\"values\":{\"a\":1}}",
          "{\"ts\":1.5,\"values\":{\"a\":1}}",
          "{\"ts\":1,\"values\":[1]}",
          "{\"\":1}"
        })
    void should_reject_payload_when_it_is_not_a_thingsboard_form(String payload) {
      assertThatThrownBy(() -> telemetry(payload)).isInstanceOf(PayloadFormatException.class);
    }

    @Test
    void should_reject_string_when_longer_than_the_limit() {
      PayloadParser limited = new PayloadParser(true, 3);
      assertThatThrownBy(
              () ->
                  limited.parseTelemetry("{\"s\":\"abcd\"}".getBytes(StandardCharsets.UTF_8), NOW))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("longer than 3");
    }
  }

  @Nested
  class WholePayload {

    @ParameterizedTest
    @ValueSource(
        strings = {
          "{\"two1\":1}{\"two2\":2}",
          "{\"a\":1} {\"b\":2}",
          "[{\"a\":1}][{\"b\":2}]",
          "{\"a\":1}[]",
          "{\"a\":1}1",
          "{\"a\":1}\"x\"",
          "{\"a\":1}garbage",
          "{\"a\":1}}",
          "{\"a\":1}]",
          "{\"ts\":1,\"values\":{\"a\":1}}{\"ts\":2,\"values\":{\"a\":2}}"
        })
    void should_reject_telemetry_when_anything_but_whitespace_follows_the_value(String payload) {
      assertThatThrownBy(() -> telemetry(payload))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("JSON");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"a\":1}{\"b\":2}", "{\"a\":1} garbage", "{\"a\":1}]"})
    void should_reject_attributes_when_anything_but_whitespace_follows_the_object(String payload) {
      assertThatThrownBy(() -> attributes(payload))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("JSON");
    }

    @Test
    void should_parse_telemetry_when_only_whitespace_follows_the_value() {
      assertThat(telemetry("{\"a\":1} \r\n\t ")).containsExactly(at(NOW, KvEntry.of("a", 1L)));
      assertThat(telemetry("[{\"ts\":1,\"values\":{\"a\":1}}]\n"))
          .containsExactly(at(1, KvEntry.of("a", 1L)));
    }

    @Test
    void should_parse_attributes_when_only_whitespace_follows_the_object() {
      assertThat(attributes("  {\"fw\":\"x\"}\n\n")).containsExactly(KvEntry.of("fw", "x"));
    }
  }

  @Nested
  class Storable {

    @ParameterizedTest
    @ValueSource(
        strings = {
          "{\"sur\\ud800\":1}",
          "{\"v\":\"x\\udfffy\"}",
          "{\"v\":\"\\udc00\\ud800\"}",
          "{\"v\":\"end\\ud800\"}",
          "{\"o\":{\"k\\ud800\":1}}",
          "{\"o\":[\"\\udfff\"]}",
          "{\"ts\":1,\"values\":{\"k\\ud800\":1}}",
          "{\"ts\":1,\"values\":{\"k\":\"\\ud800\"}}",
          "{\"ts\":1,\"values\":{\"k\":{\"n\":\"\\ud800\"}}}",
          "[{\"a\":1},{\"\\ud800\":2}]",
          "{\"values\":{\"\\ud800\":1},\"x\":1}"
        })
    void should_reject_telemetry_when_a_key_or_string_has_an_unpaired_surrogate(String payload) {
      assertThatThrownBy(() -> telemetry(payload))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("unpaired")
          .satisfies(
              e ->
                  assertThat(PayloadFormatException.unpairedSurrogate(e.getMessage()))
                      .isEqualTo(-1));
    }

    @ParameterizedTest
    @ValueSource(
        strings = {"{\"sur\\ud800\":1}", "{\"v\":\"x\\udfffy\"}", "{\"c\":{\"\\ud800\":1}}"})
    void should_reject_attributes_when_a_key_or_string_has_an_unpaired_surrogate(String payload) {
      assertThatThrownBy(() -> attributes(payload))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("unpaired");
    }

    @ParameterizedTest
    @ValueSource(
        strings = {
          "{\"a\\nERROR forged\":1}",
          "{\"tab\\tkey\":1}",
          "{\"nul\\u0000\":1}",
          "{\"   \":1}",
          "{\"ts\":1,\"values\":{\"\\u007f\":1}}"
        })
    void should_reject_telemetry_when_a_key_could_not_be_read_back(String payload) {
      assertThatThrownBy(() -> telemetry(payload))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageStartingWith("key must not");
    }

    @Test
    void should_reject_attributes_when_a_key_has_a_control_character() {
      assertThatThrownBy(() -> attributes("{\"fw\\rversion\":\"1.0\"}"))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessage("key must not contain control characters");
    }

    @Test
    void should_reject_a_key_when_it_is_longer_than_255_characters() {
      String longest = "k".repeat(NameRules.MAX_LENGTH);
      assertThat(telemetry("{\"" + longest + "\":1}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(KvEntry.of(longest, 1L));
      assertThatThrownBy(() -> telemetry("{\"" + longest + "x\":1}"))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessage("key must have at most 255 characters, got 256");
      assertThatThrownBy(() -> attributes("{\"" + longest + "x\":1}"))
          .isInstanceOf(PayloadFormatException.class);
    }

    @Test
    void should_reject_raw_utf8_bytes_of_a_surrogate() {
      // ED A0 80 is how CESU-8 (not UTF-8) writes U+D800.
      byte[] payload = {
        '{', '"', 'k', '"', ':', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', '}'
      };
      assertThatThrownBy(() -> parser.parseTelemetry(payload, NOW))
          .isInstanceOf(PayloadFormatException.class);
    }

    @Test
    void should_keep_a_surrogate_pair_when_it_is_complete() {
      assertThat(
              telemetry("{\"\\ud83d\\ude00\":\"\\ud83d\\ude00\",\"o\":{\"k\":\"\\ud83d\\ude00\"}}"))
          .extracting(TsKvEntry::kv)
          .containsExactly(
              KvEntry.of("\ud83d\ude00", "\ud83d\ude00"),
              KvEntry.json("o", "{\"k\":\"\ud83d\ude00\"}"));
    }

    @Test
    void should_keep_the_reason_storable_when_the_message_quotes_a_surrogate() {
      assertThat(new PayloadFormatException("key 'a\ud800b'").getMessage())
          .isEqualTo("key 'a\ufffdb'");
      assertThat(new PayloadFormatException("pair \ud83d\ude00").getMessage())
          .isEqualTo("pair \ud83d\ude00");
    }

    @ParameterizedTest
    @ValueSource(
        strings = {
          "9223372036854775808",
          "-9223372036854775808",
          "9223372036854775807",
          "-9223372036854775807",
          "9223372036854776",
          "-9223372036854776",
          "1e300"
        })
    void should_reject_telemetry_when_ts_is_outside_the_storable_range(String ts) {
      assertThatThrownBy(() -> telemetry("{\"ts\":" + ts + ",\"values\":{\"a\":1}}"))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageContaining("ts must be");
    }

    @Test
    void should_accept_ts_when_it_is_at_either_end_of_the_storable_range() {
      assertThat(TimestampRange.MAX).isEqualTo(9_223_372_036_854_775L);
      assertThat(TimestampRange.MIN).isEqualTo(-9_223_372_036_854_775L);
      assertThat(
              telemetry(
                  "[{\"ts\":9223372036854775,\"values\":{\"a\":1}},"
                      + "{\"ts\":-9223372036854775,\"values\":{\"a\":2}}]"))
          .containsExactly(
              at(TimestampRange.MAX, KvEntry.of("a", 1L)),
              at(TimestampRange.MIN, KvEntry.of("a", 2L)));
      // The store's write time, ts * 1000 microseconds, still fits 64 bits at both ends.
      assertThat(Math.multiplyExact(TimestampRange.MAX, 1000L)).isPositive();
      assertThat(Math.multiplyExact(TimestampRange.MIN, 1000L)).isNegative();
    }
  }

  @Nested
  class Attributes {

    @Test
    void should_parse_flat_and_nested_attributes() {
      assertThat(
              parser.parseAttributes(
                  "{\"fw\":\"1.2\",\"cfg\":{\"a\":1},\"on\":false}"
                      .getBytes(StandardCharsets.UTF_8)))
          .containsExactly(
              KvEntry.of("fw", 1.2), KvEntry.json("cfg", "{\"a\":1}"), KvEntry.of("on", false));
    }

    @Test
    void should_reject_attributes_when_payload_is_an_array() {
      assertThatThrownBy(() -> parser.parseAttributes("[{}]".getBytes(StandardCharsets.UTF_8)))
          .isInstanceOf(PayloadFormatException.class);
    }
  }
}
