package io.fieldline.transport.common.payload;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.LongNode;
import io.fieldline.common.NameRules;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.kv.TimestampRange;
import io.fieldline.common.kv.TsKvEntry;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Parses ThingsBoard device JSON into typed values.
 *
 * <p>Telemetry ({@code v1/devices/me/telemetry}) accepts the four ThingsBoard forms: an object of
 * values ({@code {"t":21.5}}), an array of such objects, a timestamped object ({@code {"ts":
 * 1451649600512, "values": {...}}}, recognised only when it has both fields), and an array of
 * timestamped objects. Values without a timestamp get the receive time.
 *
 * <p>Typing: {@code true/false} → boolean; an integral number that fits 64 bits → long; any other
 * number → double; a string → string, except that with type casting on (ThingsBoard's default) a
 * string that reads as a number becomes that number; an object or array → JSON text; {@code null} →
 * skipped. Anything else (not JSON, a bare scalar at the top, {@code ts} that is not an integer,
 * {@code values} that is not an object, a string longer than the limit) is a {@link
 * PayloadFormatException}.
 *
 * <p>Everything accepted is storable, so that an acknowledged message is never one the store then
 * refuses (a refusal there is a storage failure: no PUBACK, and the device resends it for ever). A
 * payload is therefore also refused when it holds more than one JSON value or anything but
 * whitespace after its value (ThingsBoard would store the first object and drop the rest), an
 * unpaired UTF-16 surrogate in a key or string (a JSON escape of U+D800..U+DFFF without its pair;
 * Cassandra {@code text} is UTF-8 and cannot hold it), or a device timestamp outside {@link
 * TimestampRange}.
 *
 * <p>Immutable and thread-safe. Cheap for the ~100-byte payloads devices send, so the transport
 * calls it on the event loop.
 */
public final class PayloadParser {

  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          // Correctly rounded, like Double.parseDouble, and several times faster.
          .enable(StreamReadFeature.USE_FAST_DOUBLE_PARSER)
          .disable(JsonParser.Feature.ALLOW_COMMENTS)
          .build();

  // Whole payloads read as a tree (attributes): a second value or garbage after the root value is
  // invalid. Not on MAPPER itself, which also reads nested values in the middle of a stream.
  private static final ObjectReader WHOLE_PAYLOAD =
      MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private final boolean typeCast;
  private final int maxStringValueLength;

  /**
   * @param typeCast turn numeric-looking strings into numbers, as ThingsBoard does by default
   * @param maxStringValueLength longest accepted string value in characters; 0 means unlimited
   */
  public PayloadParser(boolean typeCast, int maxStringValueLength) {
    if (maxStringValueLength < 0) {
      throw new IllegalArgumentException("maxStringValueLength must be >= 0");
    }
    this.typeCast = typeCast;
    this.maxStringValueLength = maxStringValueLength;
  }

  /** A parser with ThingsBoard's defaults: type casting on, no string length limit. */
  public static PayloadParser defaults() {
    return new PayloadParser(true, 0);
  }

  /**
   * Parses a telemetry payload.
   *
   * @param receivedAt epoch milliseconds used for values without a device timestamp
   */
  public List<TsKvEntry> parseTelemetry(byte[] payload, long receivedAt) {
    // Streamed rather than read into a tree: telemetry is the hot path (one call per PUBLISH on
    // the event loop) and a tree costs several objects per value; only nested values build one.
    if (payload.length == 0) {
      throw new PayloadFormatException("empty payload");
    }
    try (JsonParser parser = MAPPER.createParser(payload)) {
      JsonToken root = parser.nextToken();
      if (root == null) {
        throw new PayloadFormatException("empty payload");
      }
      List<TsKvEntry> out = new ArrayList<>(8);
      if (root == JsonToken.START_ARRAY) {
        for (JsonToken token = parser.nextToken();
            token != JsonToken.END_ARRAY;
            token = parser.nextToken()) {
          if (token != JsonToken.START_OBJECT) {
            throw new PayloadFormatException("telemetry array elements must be JSON objects");
          }
          addTelemetryObject(parser, payload, receivedAt, out);
        }
      } else if (root == JsonToken.START_OBJECT) {
        addTelemetryObject(parser, payload, receivedAt, out);
      } else {
        throw new PayloadFormatException("telemetry must be a JSON object or array");
      }
      // Only whitespace may follow the root value: a second object would otherwise be dropped
      // after the first was stored and acknowledged, and garbage is not JSON.
      if (parser.nextToken() != null) {
        throw new PayloadFormatException("not valid JSON: more than one value in the payload");
      }
      return lastWins(out);
    } catch (JsonProcessingException e) {
      throw new PayloadFormatException("not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new PayloadFormatException("unreadable payload", e);
    }
  }

  /** Parses an attributes payload: a flat or nested JSON object of key/values. */
  public List<KvEntry> parseAttributes(byte[] payload) {
    JsonNode root = readTree(payload);
    if (!root.isObject()) {
      throw new PayloadFormatException("attributes must be a JSON object");
    }
    List<KvEntry> out = new ArrayList<>(root.size());
    addValues(root, out);
    return out;
  }

  // The parser is on the object's START_OBJECT; leaves it on its END_OBJECT. Every field is read
  // as a plain value first; only an object holding both "ts" and "values" is the timestamped form,
  // which is known at its end. A "values" object is streamed straight into entries (the common
  // timestamped form builds no tree); its plain reading, the object as JSON text, is made from its
  // bytes only if the object turns out not to be timestamped.
  private void addTelemetryObject(
      JsonParser parser, byte[] payload, long receivedAt, List<TsKvEntry> out) throws IOException {
    List<KvEntry> plain = new ArrayList<>(8);
    JsonNode ts = null;
    JsonNode values = null; // "values" when it is not an object (the form is then invalid)
    List<KvEntry> streamedValues = null; // "values" when it is an object
    int valuesAt = -1; // where its plain reading goes in `plain`
    int valuesStart = 0;
    int valuesEnd = 0;
    PayloadFormatException valuesError = null; // the first value in it that cannot be stored
    for (String key = parser.nextFieldName(); key != null; key = parser.nextFieldName()) {
      JsonToken token = parser.nextToken();
      // Byte offsets exist only for UTF-8 input (Jackson reads UTF-16/32 payloads as characters):
      // anything else takes the tree path below.
      if (key.equals("values")
          && token == JsonToken.START_OBJECT
          && parser.currentTokenLocation().getByteOffset() >= 0) {
        valuesStart = (int) parser.currentTokenLocation().getByteOffset();
        values = null; // a later "values" wins over an earlier one
        streamedValues = new ArrayList<>(8);
        valuesError = null;
        for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
          JsonToken valueToken = parser.nextToken();
          try {
            KvEntry kv = toKv(parser, valueToken, name);
            if (kv != null) {
              streamedValues.add(kv);
            }
          } catch (PayloadFormatException e) {
            // Counts only if the object is timestamped: otherwise "values" is one nested value,
            // kept as JSON text like any other.
            if (valuesError == null) {
              valuesError = e;
            }
            parser.skipChildren();
          }
        }
        valuesEnd = (int) parser.currentLocation().getByteOffset();
        valuesAt = plain.size();
      } else if (key.equals("ts") || key.equals("values")) {
        // Kept as nodes too: the timestamped form needs them unconverted.
        JsonNode node = treeOf(parser, token);
        if (key.equals("ts")) {
          ts = node;
        } else {
          values = node;
          streamedValues = null; // a later "values" wins over an earlier one
        }
        KvEntry kv = toKv(key, node);
        if (kv != null) {
          plain.add(kv);
        }
      } else {
        KvEntry kv = toKv(parser, token, key);
        if (kv != null) {
          plain.add(kv);
        }
      }
    }
    if (ts != null && (values != null || streamedValues != null)) {
      if (!ts.canConvertToExactIntegral() || !ts.canConvertToLong() || ts.isTextual()) {
        throw new PayloadFormatException("ts must be an integer of epoch milliseconds");
      }
      List<KvEntry> kvs;
      if (streamedValues != null) {
        if (valuesError != null) {
          throw valuesError;
        }
        kvs = streamedValues;
      } else if (values != null && values.isObject()) {
        kvs = new ArrayList<>(values.size()); // read as a tree (not UTF-8 input)
        addValues(values, kvs);
      } else {
        throw new PayloadFormatException("values must be a JSON object");
      }
      long timestamp = ts.asLong();
      if (!TimestampRange.contains(timestamp)) {
        throw new PayloadFormatException(
            "ts must be between "
                + TimestampRange.MIN
                + " and "
                + TimestampRange.MAX
                + " epoch milliseconds");
      }
      for (KvEntry kv : kvs) {
        out.add(new TsKvEntry(timestamp, kv));
      }
    } else {
      if (streamedValues != null) {
        JsonNode object = MAPPER.readTree(payload, valuesStart, valuesEnd - valuesStart);
        plain.add(valuesAt, toKv("values", object));
      }
      for (KvEntry kv : plain) {
        out.add(new TsKvEntry(receivedAt, kv));
      }
    }
  }

  // The node of the current value; an ordinary integer (a timestamp) without the tree machinery.
  private static JsonNode treeOf(JsonParser parser, JsonToken token) throws IOException {
    if (token == JsonToken.VALUE_NUMBER_INT
        && parser.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      return LongNode.valueOf(parser.getLongValue());
    }
    return parser.readValueAsTree();
  }

  /**
   * Duplicate keys are accepted as ThingsBoard accepts them: of two values of one key at one
   * timestamp, the later in the payload wins (in its first one's place). Covers a key repeated in
   * one object, in a {@code values} object, and in two objects of an array with the same time.
   * Nested objects get the same rule from Jackson's tree.
   */
  private static List<TsKvEntry> lastWins(List<TsKvEntry> entries) {
    if (!hasDuplicate(entries)) {
      return entries;
    }
    Map<TsKey, TsKvEntry> byKey = new LinkedHashMap<>();
    for (TsKvEntry entry : entries) {
      byKey.put(new TsKey(entry.ts(), entry.key()), entry);
    }
    return new ArrayList<>(byKey.values());
  }

  // Comparable, so that keys with colliding hash codes cannot turn the set's bins into lists.
  private record TsKey(long ts, String key) implements Comparable<TsKey> {
    @Override
    public int compareTo(TsKey other) {
      int byTs = Long.compare(ts, other.ts);
      return byTs != 0 ? byTs : key.compareTo(other.key);
    }
  }

  // Quadratic for the few keys of a typical message (no allocation), a set beyond.
  private static boolean hasDuplicate(List<TsKvEntry> entries) {
    int n = entries.size();
    if (n <= 16) {
      for (int i = 1; i < n; i++) {
        TsKvEntry later = entries.get(i);
        for (int j = 0; j < i; j++) {
          TsKvEntry earlier = entries.get(j);
          if (earlier.ts() == later.ts() && earlier.key().equals(later.key())) {
            return true;
          }
        }
      }
      return false;
    }
    Set<TsKey> seen = new HashSet<>();
    for (TsKvEntry entry : entries) {
      if (!seen.add(new TsKey(entry.ts(), entry.key()))) {
        return true;
      }
    }
    return false;
  }

  // The same typing as toKv(String, JsonNode), from the parser's current token.
  private @Nullable KvEntry toKv(JsonParser parser, JsonToken token, String key)
      throws IOException {
    checkKey(key);
    switch (token) {
      case VALUE_NULL:
        return null;
      case VALUE_TRUE:
        return KvEntry.of(key, true);
      case VALUE_FALSE:
        return KvEntry.of(key, false);
      case VALUE_NUMBER_INT:
        return parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER
            ? integral(key, parser.getBigIntegerValue())
            : KvEntry.of(key, parser.getLongValue());
      case VALUE_NUMBER_FLOAT:
        return KvEntry.of(key, parser.getDoubleValue());
      case VALUE_STRING:
        return string(key, parser.getText());
      case START_OBJECT:
      case START_ARRAY:
        return toKv(key, (JsonNode) parser.readValueAsTree());
      default:
        throw new PayloadFormatException("unsupported value for key '" + key + "'");
    }
  }

  private void addValues(JsonNode object, List<KvEntry> out) {
    for (Map.Entry<String, JsonNode> field : object.properties()) {
      KvEntry kv = toKv(field.getKey(), field.getValue());
      if (kv != null) {
        out.add(kv);
      }
    }
  }

  private @Nullable KvEntry toKv(String key, JsonNode value) {
    checkKey(key);
    switch (value.getNodeType()) {
      case NULL:
        return null;
      case BOOLEAN:
        return KvEntry.of(key, value.booleanValue());
      case NUMBER:
        // Written with a fraction or exponent → double; written as an integer → long if it fits.
        return value.isIntegralNumber()
            ? integral(key, value.bigIntegerValue())
            : KvEntry.of(key, value.doubleValue());
      case STRING:
        return string(key, value.textValue());
      case OBJECT:
      case ARRAY:
        // Nested keys and strings end up in this text: checked whole, once.
        return KvEntry.json(key, wellFormed(value.toString(), "nested value of a key"));
      default:
        throw new PayloadFormatException("unsupported value for key '" + key + "'");
    }
  }

  private static void checkKey(String key) {
    if (key.isEmpty()) {
      throw new PayloadFormatException("keys must not be empty");
    }
    wellFormed(key, "key");
    // The key itself is not quoted: it may be long or hold control characters.
    String violation = NameRules.violation(key, NameRules.MAX_LENGTH);
    if (violation != null) {
      throw new PayloadFormatException("key " + violation);
    }
  }

  // The key or value itself is not quoted in the message: it is what cannot be stored.
  private static String wellFormed(String text, String what) {
    int at = PayloadFormatException.unpairedSurrogate(text);
    if (at >= 0) {
      throw new PayloadFormatException(
          what + " holds an unpaired UTF-16 surrogate at character " + at);
    }
    return text;
  }

  private KvEntry string(String key, String text) {
    wellFormed(text, "string value");
    if (maxStringValueLength > 0 && text.length() > maxStringValueLength) {
      throw new PayloadFormatException(
          "string value of '" + key + "' is longer than " + maxStringValueLength);
    }
    if (typeCast && looksNumeric(text)) {
      try {
        if (text.indexOf('.') >= 0 || text.indexOf('e') >= 0 || text.indexOf('E') >= 0) {
          return KvEntry.of(key, Double.parseDouble(text));
        }
        return integral(key, new BigInteger(text));
      } catch (NumberFormatException notANumber) {
        return KvEntry.of(key, text);
      }
    }
    return KvEntry.of(key, text);
  }

  // An integer too large for 64 bits is kept as a double rather than rejected, as ThingsBoard does.
  private static KvEntry integral(String key, BigInteger value) {
    return value.bitLength() < 64
        ? KvEntry.of(key, value.longValue())
        : KvEntry.of(key, value.doubleValue());
  }

  // Cheap pre-check so that ordinary strings never pay for a NumberFormatException.
  private static boolean looksNumeric(String text) {
    if (text.isEmpty() || text.length() > 64) {
      return false;
    }
    char first = text.charAt(0);
    if (!(first == '-' || first == '+' || first == '.' || Character.isDigit(first))) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (!(Character.isDigit(c) || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
        return false;
      }
    }
    return true;
  }

  private static JsonNode readTree(byte[] payload) {
    if (payload.length == 0) {
      throw new PayloadFormatException("empty payload");
    }
    try {
      JsonNode node = WHOLE_PAYLOAD.readTree(payload);
      if (node == null || node.isMissingNode()) {
        throw new PayloadFormatException("empty payload");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw new PayloadFormatException("not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new PayloadFormatException("unreadable payload", e);
    }
  }
}
