package io.fieldline.transport.common.payload;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fieldline.common.NameRules;
import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.kv.TsKvEntry;
import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Parses the payloads a gateway publishes for its child devices (ThingsBoard's gateway API).
 *
 * <ul>
 *   <li>{@code v1/gateway/telemetry}: an object of device name → that device's telemetry, in any of
 *       the four forms of {@code v1/devices/me/telemetry} ({@link PayloadParser#parseTelemetry}):
 *       an array of {@code {"ts":..,"values":{..}}}, a values object, an array of values objects;
 *       values without {@code ts} get the receive time given.
 *   <li>{@code v1/gateway/attributes}: an object of device name → a values object (client-side
 *       attributes, as {@link PayloadParser#parseAttributes}).
 *   <li>{@code v1/gateway/connect}: {@code {"device":"name","type":"type"}}, the type optional
 *       ({@code "default"} when absent, null or blank).
 *   <li>{@code v1/gateway/disconnect}: {@code {"device":"name"}}.
 * </ul>
 *
 * <p>Each device's part is typed and checked exactly as a device's own payload is (the {@link
 * PayloadParser} given: the same type casting and string limit); device names follow {@link
 * NameRules}. A name given twice in one payload keeps its later value (as a JSON object read into a
 * tree would). Anything wrong anywhere makes the whole payload a {@link PayloadFormatException}
 * whose message names the device concerned (quoted, at most 64 characters), so a gateway message is
 * never stored in part. A payload naming more than the allowed number of devices is a {@link
 * TooManyDevicesException}, found before any device's values are parsed.
 *
 * <p>Each device's part is parsed from a copy of its bytes (the values are not read twice into
 * trees): cheap next to storing them. Immutable and thread-safe.
 */
public final class GatewayPayloadParser {

  /** The quoted form of a device name in messages is cut at this many characters. */
  private static final int QUOTED_NAME_LENGTH = 64;

  private static final ObjectMapper MAPPER =
      JsonMapper.builder().disable(JsonParser.Feature.ALLOW_COMMENTS).build();
  private static final ObjectReader WHOLE_PAYLOAD =
      MAPPER.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /**
   * A child device as {@code v1/gateway/connect} announces it.
   *
   * @param name the device's name, as sent
   * @param type its type ({@code "default"} when the gateway sent none)
   */
  public record ChildDevice(String name, String type) {
    public ChildDevice {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(type, "type");
    }
  }

  /** A gateway payload names more devices than one message may carry. */
  public static final class TooManyDevicesException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int limit;

    public TooManyDevicesException(int limit) {
      super("more than " + limit + " devices in one gateway message");
      this.limit = limit;
    }

    /** The number of devices one message may carry. */
    public int limit() {
      return limit;
    }
  }

  private final PayloadParser values;

  /**
   * @param values how each device's values are parsed and typed (the server's device parser)
   */
  public GatewayPayloadParser(PayloadParser values) {
    this.values = Objects.requireNonNull(values, "values");
  }

  /**
   * Parses a {@code v1/gateway/telemetry} payload.
   *
   * @param receivedAt epoch milliseconds for values without {@code ts}
   * @param maxDevices the most devices the payload may name
   * @return each device's values, in payload order
   * @throws PayloadFormatException for anything invalid
   * @throws TooManyDevicesException for more than {@code maxDevices} device names
   */
  public Map<String, List<TsKvEntry>> parseTelemetry(
      byte[] payload, long receivedAt, int maxDevices) {
    Map<String, byte[]> parts = parts(payload, maxDevices, false);
    Map<String, List<TsKvEntry>> out = new LinkedHashMap<>(capacity(parts.size()));
    for (Map.Entry<String, byte[]> part : parts.entrySet()) {
      try {
        out.put(part.getKey(), values.parseTelemetry(part.getValue(), receivedAt));
      } catch (PayloadFormatException e) {
        throw about(part.getKey(), e);
      }
    }
    return out;
  }

  /**
   * Parses a {@code v1/gateway/attributes} payload.
   *
   * @param maxDevices the most devices the payload may name
   * @return each device's client-side attributes, in payload order
   * @throws PayloadFormatException for anything invalid
   * @throws TooManyDevicesException for more than {@code maxDevices} device names
   */
  public Map<String, List<KvEntry>> parseAttributes(byte[] payload, int maxDevices) {
    Map<String, byte[]> parts = parts(payload, maxDevices, true);
    Map<String, List<KvEntry>> out = new LinkedHashMap<>(capacity(parts.size()));
    for (Map.Entry<String, byte[]> part : parts.entrySet()) {
      try {
        out.put(part.getKey(), values.parseAttributes(part.getValue()));
      } catch (PayloadFormatException e) {
        throw about(part.getKey(), e);
      }
    }
    return out;
  }

  /**
   * Parses a {@code v1/gateway/connect} payload.
   *
   * @throws PayloadFormatException for anything invalid
   */
  public ChildDevice parseConnect(byte[] payload) {
    JsonNode root = object(payload, "connect");
    String name = deviceName(root);
    JsonNode type = root.path("type");
    if (type.isMissingNode() || type.isNull()) {
      return new ChildDevice(name, "default");
    }
    if (!type.isTextual()) {
      throw new PayloadFormatException("\"type\" must be a string");
    }
    if (type.textValue().isBlank()) {
      return new ChildDevice(name, "default");
    }
    String violation = NameRules.violation(type.textValue(), NameRules.MAX_LENGTH);
    if (violation != null) {
      throw new PayloadFormatException("\"type\" " + violation);
    }
    return new ChildDevice(name, type.textValue());
  }

  /**
   * Parses a {@code v1/gateway/disconnect} payload.
   *
   * @return the device's name
   * @throws PayloadFormatException for anything invalid
   */
  public String parseDisconnect(byte[] payload) {
    return deviceName(object(payload, "disconnect"));
  }

  private static JsonNode object(byte[] payload, String what) {
    if (payload.length == 0) {
      throw new PayloadFormatException("empty payload");
    }
    JsonNode root;
    try {
      root = WHOLE_PAYLOAD.readTree(payload);
    } catch (JsonProcessingException e) {
      throw new PayloadFormatException("not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new PayloadFormatException("unreadable payload", e);
    }
    if (root == null || !root.isObject()) {
      throw new PayloadFormatException(what + " must be a JSON object {\"device\":\"name\"}");
    }
    return root;
  }

  private static String deviceName(JsonNode root) {
    JsonNode device = root.path("device");
    if (!device.isTextual()) {
      throw new PayloadFormatException("\"device\" must be the device's name, a string");
    }
    return checkedName(device.textValue());
  }

  private static String checkedName(String name) {
    String violation = NameRules.violation(name, NameRules.MAX_LENGTH);
    if (violation != null) {
      // Not quoted: the name is what is wrong (too long, control characters).
      throw new PayloadFormatException("device name " + violation);
    }
    return name;
  }

  /**
   * Device name → the bytes of its value, in payload order. The whole payload is checked to be one
   * JSON object (nothing after it); each value is only skipped over, to be parsed on its own.
   */
  private static Map<String, byte[]> parts(byte[] payload, int maxDevices, boolean objectsOnly) {
    if (payload.length == 0) {
      throw new PayloadFormatException("empty payload");
    }
    try (JsonParser parser = MAPPER.createParser(payload)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new PayloadFormatException(
            "a gateway payload must be a JSON object of device names, {\"Device A\": ...}");
      }
      Map<String, byte[]> parts = new LinkedHashMap<>();
      for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
        checkedName(name);
        JsonToken token = parser.nextToken();
        boolean shaped =
            token == JsonToken.START_OBJECT || (!objectsOnly && token == JsonToken.START_ARRAY);
        if (!shaped) {
          throw new PayloadFormatException(
              "device "
                  + quoted(name)
                  + ": "
                  + (objectsOnly
                      ? "attributes must be a JSON object"
                      : "telemetry must be a JSON object or array"));
        }
        parts.remove(name); // a repeated name: the later value wins
        parts.put(name, valueBytes(parser, payload));
        if (parts.size() > maxDevices) {
          throw new TooManyDevicesException(maxDevices);
        }
      }
      // Only whitespace may follow: a second object would otherwise be dropped unseen.
      if (parser.nextToken() != null) {
        throw new PayloadFormatException("not valid JSON: more than one value in the payload");
      }
      return parts;
    } catch (JsonProcessingException e) {
      throw new PayloadFormatException("not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new PayloadFormatException("unreadable payload", e);
    }
  }

  // The parser is on the value's first token; leaves it on its last. Byte offsets exist only for
  // UTF-8 input (Jackson reads UTF-16/32 as characters): other input goes through a tree.
  private static byte[] valueBytes(JsonParser parser, byte[] payload) throws IOException {
    long start = parser.currentTokenLocation().getByteOffset();
    if (start < 0) {
      return MAPPER.writeValueAsBytes(parser.readValueAsTree());
    }
    parser.skipChildren();
    long end = parser.currentLocation().getByteOffset();
    return Arrays.copyOfRange(payload, (int) start, (int) end);
  }

  private static PayloadFormatException about(String name, PayloadFormatException e) {
    return new PayloadFormatException("device " + quoted(name) + ": " + e.getMessage(), e);
  }

  /** A valid device name, quoted and cut for messages. */
  static String quoted(String name) {
    if (name.length() <= QUOTED_NAME_LENGTH) {
      return "'" + name + "'";
    }
    int cut = QUOTED_NAME_LENGTH;
    if (Character.isHighSurrogate(name.charAt(cut - 1))) {
      cut--;
    }
    return "'" + name.substring(0, cut) + "…'";
  }

  private static int capacity(int entries) {
    return entries * 4 / 3 + 1;
  }
}
