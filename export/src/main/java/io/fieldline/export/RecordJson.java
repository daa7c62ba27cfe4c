package io.fieldline.export;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fieldline.common.feed.FeedEntry;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.TsKvEntry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns one {@link FeedEntry} into the JSON documents sinks send (docs/export.md, "Records"): one
 * record per distinct timestamp of a telemetry entry, one record per attributes entry.
 *
 * <p>Sits between the change feed and the sinks: the exporter calls it once per entry it delivers,
 * and every sink sends the bytes as they are. Immutable and thread-safe; any thread may call it.
 *
 * <p>Values keep their stored type: {@code LONG} as a JSON integer, {@code DOUBLE} as a JSON number
 * (non-finite values as the strings {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}), {@code
 * BOOLEAN}, {@code STRING}, and {@code JSON} embedded as JSON (a string holding the stored text if
 * that text does not parse as exactly one JSON value). A key repeated within one timestamp (or one
 * attributes entry) appears once, at its first position, with its last value: the value the store
 * kept.
 */
public final class RecordJson {

  /**
   * Parses stored JSON values before they are embedded (trailing garbage makes them strings) and
   * writes the records. Reading keeps Jackson's nesting limit (1,000); writing allows a few levels
   * more, for the record's own objects around a value nested up to that limit.
   */
  private static final ObjectMapper MAPPER =
      JsonMapper.builder(
              JsonFactory.builder()
                  .streamWriteConstraints(
                      StreamWriteConstraints.builder()
                          .maxNestingDepth(StreamReadConstraints.DEFAULT_MAX_DEPTH + 8)
                          .build())
                  .build())
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  /** The default record set of an exporter. */
  public RecordJson() {}

  /**
   * The {@link ExportRecord#storedAt()} of an entry for callers that have no better time: its
   * sequence number is taken from the writer's hybrid clock in microseconds when the entry is
   * written, so {@code seq / 1000} is the write time in epoch milliseconds (later than the wall
   * clock only when the writer's clock stepped back).
   */
  public static long storedAt(FeedEntry entry) {
    return entry.seq() / 1000;
  }

  /**
   * The records of one feed entry, in order; {@code seq} of record {@code i} is {@code entry.seq()
   * + i} (at most {@link FeedEntry#seqCount()} records). An entry without values gives no record.
   *
   * @param deviceName the device's name, empty when unknown
   * @param deviceType the device's type (its profile's name), empty when unknown
   * @param storedAt epoch milliseconds at which the entry was written, copied to {@link
   *     ExportRecord#storedAt()} and not into the JSON; {@link #storedAt(FeedEntry)} when the
   *     caller has nothing better
   */
  public List<ExportRecord> records(
      FeedEntry entry, String deviceName, String deviceType, long storedAt) {
    if (entry instanceof FeedEntry.Telemetry telemetry) {
      return telemetry(telemetry, deviceName, deviceType, storedAt);
    }
    return List.of(attributes((FeedEntry.Attributes) entry, deviceName, deviceType, storedAt));
  }

  private List<ExportRecord> telemetry(
      FeedEntry.Telemetry entry, String deviceName, String deviceType, long storedAt) {
    Map<Long, Map<String, KvEntry>> byTs = new LinkedHashMap<>();
    for (TsKvEntry value : entry.entries()) {
      byTs.computeIfAbsent(value.ts(), ts -> new LinkedHashMap<>()).put(value.key(), value.kv());
    }
    List<ExportRecord> records = new ArrayList<>(byTs.size());
    long seq = entry.seq();
    for (Map.Entry<Long, Map<String, KvEntry>> group : byTs.entrySet()) {
      ByteArrayOutputStream out = new ByteArrayOutputStream(64 + 32 * group.getValue().size());
      try (JsonGenerator json = MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
        header(json, "TELEMETRY", entry, deviceName, deviceType, seq, group.getKey());
        json.writeObjectFieldStart("values");
        writeValues(json, group.getValue().values());
        json.writeEndObject();
        json.writeEndObject();
      } catch (IOException e) {
        throw new UncheckedIOException(e); // cannot happen: the output is in memory
      }
      records.add(new ExportRecord(entry.deviceId(), seq, storedAt, out.toByteArray()));
      seq++;
    }
    return records;
  }

  private ExportRecord attributes(
      FeedEntry.Attributes entry, String deviceName, String deviceType, long storedAt) {
    Map<String, KvEntry> byKey = new LinkedHashMap<>();
    for (KvEntry value : entry.entries()) {
      byKey.put(value.key(), value);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(96 + 32 * byKey.size());
    try (JsonGenerator json = MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
      header(json, "ATTRIBUTES", entry, deviceName, deviceType, entry.seq(), entry.ts());
      json.writeStringField("scope", entry.scope().name());
      json.writeObjectFieldStart("attributes");
      writeValues(json, byKey.values());
      json.writeEndObject();
      json.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e); // cannot happen: the output is in memory
    }
    return new ExportRecord(entry.deviceId(), entry.seq(), storedAt, out.toByteArray());
  }

  private static void header(
      JsonGenerator json,
      String kind,
      FeedEntry entry,
      String deviceName,
      String deviceType,
      long seq,
      long ts)
      throws IOException {
    json.writeStartObject();
    json.writeStringField("kind", kind);
    json.writeStringField("deviceId", entry.deviceId().toString());
    json.writeStringField("deviceName", deviceName);
    json.writeStringField("deviceType", deviceType);
    json.writeNumberField("seq", seq);
    json.writeNumberField("ts", ts);
  }

  private static void writeValues(JsonGenerator json, Iterable<KvEntry> values) throws IOException {
    for (KvEntry value : values) {
      json.writeFieldName(value.key());
      switch (value.type()) {
        case BOOLEAN -> json.writeBoolean(((KvEntry.BooleanKv) value).bool());
        case LONG -> json.writeNumber(((KvEntry.LongKv) value).number());
        case DOUBLE -> json.writeNumber(((KvEntry.DoubleKv) value).number());
        case STRING -> json.writeString(((KvEntry.StringKv) value).text());
        case JSON -> writeEmbedded(json, ((KvEntry.JsonKv) value).json());
      }
    }
  }

  private static void writeEmbedded(JsonGenerator json, String text) throws IOException {
    JsonNode node;
    try {
      node = MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      json.writeString(text);
      return;
    }
    if (node.isMissingNode()) { // blank text
      json.writeString(text);
    } else {
      MAPPER.writeTree(json, node);
    }
  }
}
