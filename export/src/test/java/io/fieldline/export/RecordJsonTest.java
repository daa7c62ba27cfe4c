package io.fieldline.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fieldline.common.DeviceId;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.kv.AttributeScope;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class RecordJsonTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final DeviceId DEVICE =
      new DeviceId(UUID.fromString("3f1c2a70-5b6d-11ef-9c1a-0242ac120002"));
  private static final long SEQ = 1_722_500_000_123_456L;

  private final RecordJson recordJson = new RecordJson();

  @Test
  void should_keep_stored_types_when_telemetry_has_every_value_type() throws IOException {
    FeedEntry entry =
        telemetry(
            new TsKvEntry(1000, KvEntry.of("temperature", 21.5)),
            new TsKvEntry(1000, KvEntry.of("on", true)),
            new TsKvEntry(1000, KvEntry.of("n", 3L)),
            new TsKvEntry(1000, KvEntry.of("big", Long.MAX_VALUE)),
            new TsKvEntry(1000, KvEntry.of("s", "text")),
            new TsKvEntry(1000, KvEntry.json("obj", "{\"a\":[1,2.5,null],\"b\":{\"c\":\"d\"}}")),
            new TsKvEntry(1000, KvEntry.json("arr", "[true,false]")));

    List<ExportRecord> records = recordJson.records(entry, "boiler-7", "boiler", 42L);

    assertThat(records).hasSize(1);
    ExportRecord record = records.get(0);
    assertThat(record.deviceId()).isEqualTo(DEVICE);
    assertThat(record.seq()).isEqualTo(SEQ);
    assertThat(record.storedAt()).isEqualTo(42L);
    assertThat(text(record))
        .isEqualTo(
            "{\"kind\":\"TELEMETRY\",\"deviceId\":\"3f1c2a70-5b6d-11ef-9c1a-0242ac120002\","
                + "\"deviceName\":\"boiler-7\",\"deviceType\":\"boiler\",\"seq\":"
                + SEQ
                + ",\"ts\":1000,\"values\":{\"temperature\":21.5,\"on\":true,\"n\":3,"
                + "\"big\":9223372036854775807,\"s\":\"text\","
                + "\"obj\":{\"a\":[1,2.5,null],\"b\":{\"c\":\"d\"}},\"arr\":[true,false]}}");
    JsonNode values = parse(record).get("values");
    assertThat(values.get("temperature").isDouble()).isTrue();
    assertThat(values.get("n").isIntegralNumber()).isTrue();
    assertThat(values.get("big").asLong()).isEqualTo(Long.MAX_VALUE);
    assertThat(values.get("on").isBoolean()).isTrue();
    assertThat(values.get("obj").isObject()).isTrue();
  }

  @Test
  void should_make_one_record_per_distinct_ts_when_telemetry_has_several() throws IOException {
    FeedEntry.Telemetry entry =
        telemetry(
            new TsKvEntry(2000, KvEntry.of("a", 1L)),
            new TsKvEntry(1000, KvEntry.of("a", 0L)),
            new TsKvEntry(2000, KvEntry.of("b", 2L)),
            new TsKvEntry(3000, KvEntry.of("c", 3L)));

    List<ExportRecord> records = recordJson.records(entry, "", "", RecordJson.storedAt(entry));

    assertThat(records).hasSize(entry.seqCount()).hasSize(3);
    assertThat(records).extracting(ExportRecord::seq).containsExactly(SEQ, SEQ + 1, SEQ + 2);
    assertThat(records).extracting(ExportRecord::storedAt).containsOnly(SEQ / 1000);
    assertThat(parse(records.get(0)).get("ts").asLong()).isEqualTo(2000);
    assertThat(parse(records.get(0)).get("values").toString()).isEqualTo("{\"a\":1,\"b\":2}");
    assertThat(parse(records.get(1)).get("ts").asLong()).isEqualTo(1000);
    assertThat(parse(records.get(1)).get("seq").asLong()).isEqualTo(SEQ + 1);
    assertThat(parse(records.get(2)).get("values").toString()).isEqualTo("{\"c\":3}");
    assertThat(parse(records.get(2)).get("deviceName").asText()).isEmpty();
  }

  @Test
  void should_keep_the_last_value_when_a_key_repeats_within_one_ts() throws IOException {
    FeedEntry entry =
        telemetry(
            new TsKvEntry(1000, KvEntry.of("a", 1L)),
            new TsKvEntry(1000, KvEntry.of("b", 2L)),
            new TsKvEntry(1000, KvEntry.of("a", "later")));

    ExportRecord record = recordJson.records(entry, "", "", 0L).get(0);

    assertThat(parse(record).get("values").toString()).isEqualTo("{\"a\":\"later\",\"b\":2}");
  }

  @Test
  void should_make_one_record_when_attributes_are_updated() throws IOException {
    FeedEntry entry =
        new FeedEntry.Attributes(
            9,
            SEQ,
            DEVICE,
            AttributeScope.SHARED_SCOPE,
            1_722_500_000_000L,
            List.of(
                KvEntry.of("firmware", "1.2.3"),
                KvEntry.of("interval", 30L),
                KvEntry.json("limits", "{\"max\":80}")));

    List<ExportRecord> records = recordJson.records(entry, "boiler-7", "boiler", 7L);

    assertThat(records).hasSize(1);
    assertThat(records.get(0).seq()).isEqualTo(SEQ);
    assertThat(text(records.get(0)))
        .isEqualTo(
            "{\"kind\":\"ATTRIBUTES\",\"deviceId\":\"3f1c2a70-5b6d-11ef-9c1a-0242ac120002\","
                + "\"deviceName\":\"boiler-7\",\"deviceType\":\"boiler\",\"seq\":"
                + SEQ
                + ",\"ts\":1722500000000,\"scope\":\"SHARED_SCOPE\",\"attributes\":"
                + "{\"firmware\":\"1.2.3\",\"interval\":30,\"limits\":{\"max\":80}}}");
  }

  @Test
  void should_escape_when_keys_and_strings_hold_quotes_controls_and_unicode() throws IOException {
    String oddKey = "we\"ird\\key\n\t\u0001 ü 😀 </script>";
    String oddText = "line1\nline2 \"quoted\" \\ \u0000 \u2028 日本";
    FeedEntry entry =
        telemetry(
            new TsKvEntry(1000, KvEntry.of(oddKey, oddText)),
            new TsKvEntry(1000, KvEntry.of("", "empty key")));

    ExportRecord record = recordJson.records(entry, "name \"with\" quotes", "ty\\pe", 0L).get(0);

    JsonNode json = parse(record);
    assertThat(json.get("values").get(oddKey).asText()).isEqualTo(oddText);
    assertThat(json.get("values").get("").asText()).isEqualTo("empty key");
    assertThat(json.get("deviceName").asText()).isEqualTo("name \"with\" quotes");
    assertThat(json.get("deviceType").asText()).isEqualTo("ty\\pe");
    assertThat(text(record)).doesNotContain("\n").doesNotContain("\u0000");
  }

  @Test
  void should_fall_back_to_a_string_when_stored_json_is_not_json() throws IOException {
    FeedEntry entry =
        telemetry(
            new TsKvEntry(1000, KvEntry.json("broken", "{\"a\":")),
            new TsKvEntry(1000, KvEntry.json("trailing", "{\"a\":1} x")),
            new TsKvEntry(1000, KvEntry.json("blank", " ")),
            new TsKvEntry(1000, KvEntry.json("spaced", " { \"a\" : 1 } ")));

    JsonNode values = parse(recordJson.records(entry, "", "", 0L).get(0)).get("values");

    assertThat(values.get("broken").isTextual()).isTrue();
    assertThat(values.get("broken").asText()).isEqualTo("{\"a\":");
    assertThat(values.get("trailing").asText()).isEqualTo("{\"a\":1} x");
    assertThat(values.get("blank").asText()).isEqualTo(" ");
    assertThat(values.get("spaced").toString()).isEqualTo("{\"a\":1}");
  }

  @Test
  void should_write_strings_when_doubles_are_not_finite() throws IOException {
    FeedEntry entry =
        telemetry(
            new TsKvEntry(1000, KvEntry.of("nan", Double.NaN)),
            new TsKvEntry(1000, KvEntry.of("inf", Double.NEGATIVE_INFINITY)),
            new TsKvEntry(1000, KvEntry.of("whole", 3.0)));

    JsonNode values = parse(recordJson.records(entry, "", "", 0L).get(0)).get("values");

    assertThat(values.get("nan").asText()).isEqualTo("NaN");
    assertThat(values.get("inf").asText()).isEqualTo("-Infinity");
    assertThat(values.get("whole").isDouble()).isTrue();
  }

  @Test
  void should_embed_when_stored_json_is_nested_to_the_parsers_limit() throws IOException {
    int depth = 1000;
    String deep = "[".repeat(depth) + "]".repeat(depth);
    String tooDeep = "[".repeat(depth + 1) + "]".repeat(depth + 1);
    FeedEntry entry =
        telemetry(
            new TsKvEntry(1000, KvEntry.json("deep", deep)),
            new TsKvEntry(1000, KvEntry.json("tooDeep", tooDeep)));

    ExportRecord record = recordJson.records(entry, "", "", 0L).get(0);

    String text = text(record);
    assertThat(text).contains("\"deep\":" + deep + ",");
    assertThat(text).contains("\"tooDeep\":\"" + tooDeep + "\"");
  }

  @Test
  void should_write_valid_json_when_a_name_holds_an_unpaired_surrogate() throws IOException {
    FeedEntry entry = telemetry(new TsKvEntry(1000, KvEntry.of("a", 1L)));

    ExportRecord record = recordJson.records(entry, "bad\uD800name", "", 0L).get(0);

    assertThat(parse(record).get("deviceName").asText()).isEqualTo("bad\uD800name");
  }

  @Test
  void should_make_no_record_when_telemetry_is_empty() {
    assertThat(recordJson.records(telemetry(), "", "", 0L)).isEmpty();
  }

  private static FeedEntry.Telemetry telemetry(TsKvEntry... values) {
    return new FeedEntry.Telemetry(5, SEQ, DEVICE, List.of(values));
  }

  private static String text(ExportRecord record) {
    return new String(record.json(), StandardCharsets.UTF_8);
  }

  private static JsonNode parse(ExportRecord record) throws IOException {
    return MAPPER.readTree(record.json());
  }
}
