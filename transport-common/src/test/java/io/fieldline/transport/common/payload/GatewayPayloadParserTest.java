package io.fieldline.transport.common.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.kv.KvEntry;
import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.common.kv.TsKvEntry;
import io.fieldline.transport.common.payload.GatewayPayloadParser.ChildDevice;
import io.fieldline.transport.common.payload.GatewayPayloadParser.TooManyDevicesException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GatewayPayloadParserTest {

  private static final long NOW = 1_700_000_000_000L;
  private final GatewayPayloadParser parser = new GatewayPayloadParser(PayloadParser.defaults());

  private static byte[] bytes(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  @Nested
  class Telemetry {

    private Map<String, List<TsKvEntry>> parse(String json) {
      return parser.parseTelemetry(bytes(json), NOW, 1000);
    }

    @Test
    void should_read_each_devices_timestamped_array_when_given_thingsboards_form() {
      Map<String, List<TsKvEntry>> parsed =
          parse(
              "{\"Device"
                  + " A\":[{\"ts\":1483228800000,\"values\":{\"temperature\":42,\"humidity\":80}},"
                  + "{\"ts\":1483228801000,\"values\":{\"temperature\":43}}],\"Device"
                  + " B\":[{\"ts\":1483228800000,\"values\":{\"temperature\":42.5}}]}");

      assertThat(parsed)
          .containsExactly(
              Map.entry(
                  "Device A",
                  List.of(
                      new TsKvEntry(1483228800000L, KvEntry.of("temperature", 42L)),
                      new TsKvEntry(1483228800000L, KvEntry.of("humidity", 80L)),
                      new TsKvEntry(1483228801000L, KvEntry.of("temperature", 43L)))),
              Map.entry(
                  "Device B",
                  List.of(new TsKvEntry(1483228800000L, KvEntry.of("temperature", 42.5)))));
    }

    @Test
    void should_stamp_values_with_the_receive_time_when_a_device_sends_them_without_ts() {
      Map<String, List<TsKvEntry>> parsed =
          parse("{\"A\":{\"t\":1,\"s\":\"on\"},\"B\":[{\"t\":2},{\"u\":true}]}");

      assertThat(parsed.get("A"))
          .containsExactly(
              new TsKvEntry(NOW, KvEntry.of("t", 1L)), new TsKvEntry(NOW, KvEntry.of("s", "on")));
      assertThat(parsed.get("B"))
          .containsExactly(
              new TsKvEntry(NOW, KvEntry.of("t", 2L)), new TsKvEntry(NOW, KvEntry.of("u", true)));
    }

    @Test
    void should_keep_payload_order_and_the_later_value_when_a_device_name_repeats() {
      Map<String, List<TsKvEntry>> parsed =
          parse("{\"B\":{\"t\":1},\"A\":{\"t\":2},\"B\":{\"t\":3}}");

      assertThat(parsed.keySet()).containsExactly("A", "B");
      assertThat(parsed.get("B")).containsExactly(new TsKvEntry(NOW, KvEntry.of("t", 3L)));
    }

    @Test
    void should_accept_an_empty_object_and_empty_devices_when_there_is_nothing_to_store() {
      assertThat(parse("{}")).isEmpty();
      assertThat(parse("{\"A\":[]}")).containsExactly(Map.entry("A", List.of()));
    }

    @Test
    void should_type_values_as_the_device_parser_does_when_type_casting_is_on() {
      assertThat(parse("{\"A\":{\"n\":\"12\",\"o\":{\"x\":1}}}").get("A"))
          .containsExactly(
              new TsKvEntry(NOW, KvEntry.of("n", 12L)),
              new TsKvEntry(NOW, KvEntry.json("o", "{\"x\":1}")));
    }

    @Test
    void should_refuse_more_devices_than_allowed_before_parsing_their_values() {
      // The second device's values are invalid too: the bound is what is reported.
      assertThatThrownBy(
              () ->
                  parser.parseTelemetry(
                      bytes("{\"A\":{\"t\":1},\"B\":{\"ts\":\"x\",\"values\":{}}}"), NOW, 1))
          .isInstanceOf(TooManyDevicesException.class)
          .hasMessage("more than 1 devices in one gateway message");
    }

    @Test
    void should_accept_exactly_the_allowed_number_of_devices() {
      assertThat(parser.parseTelemetry(bytes("{\"A\":{\"t\":1},\"B\":{\"t\":2}}"), NOW, 2))
          .hasSize(2);
    }

    @Test
    void should_read_utf16_payloads_through_a_tree_when_byte_offsets_are_unknown() {
      byte[] utf16 = "{\"A\":{\"t\":1}}".getBytes(StandardCharsets.UTF_16BE);

      assertThat(parser.parseTelemetry(utf16, NOW, 10))
          .containsExactly(Map.entry("A", List.of(new TsKvEntry(NOW, KvEntry.of("t", 1L)))));
    }
  }

  @Nested
  class Attributes {

    @Test
    void should_read_each_devices_attributes_when_given_objects() {
      Map<String, List<KvEntry>> parsed =
          parser.parseAttributes(
              bytes("{\"Device A\":{\"fw\":\"1.2\",\"on\":true},\"Device B\":{\"n\":3}}"), 10);

      assertThat(parsed)
          .containsExactly(
              Map.entry("Device A", List.of(KvEntry.of("fw", 1.2), KvEntry.of("on", true))),
              Map.entry("Device B", List.of(KvEntry.of("n", 3L))));
    }

    @Test
    void should_refuse_an_array_when_a_device_sends_attributes() {
      assertThatThrownBy(() -> parser.parseAttributes(bytes("{\"A\":[{\"k\":1}]}"), 10))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessage("device 'A': attributes must be a JSON object");
    }
  }

  @Nested
  class ConnectAndDisconnect {

    @Test
    void should_read_the_name_and_type_when_a_gateway_connects_a_device() {
      assertThat(parser.parseConnect(bytes("{\"device\":\"Device A\",\"type\":\"thermometer\"}")))
          .isEqualTo(new ChildDevice("Device A", "thermometer"));
    }

    @ParameterizedTest
    @CsvSource(
        delimiter = '|',
        value = {
          "{\"device\":\"A\"}",
          "{\"device\":\"A\",\"type\":null}",
          "{\"device\":\"A\",\"type\":\"  \"}"
        })
    void should_use_type_default_when_the_gateway_sends_none(String json) {
      assertThat(parser.parseConnect(bytes(json))).isEqualTo(new ChildDevice("A", "default"));
    }

    @Test
    void should_read_the_name_when_a_gateway_disconnects_a_device() {
      assertThat(parser.parseDisconnect(bytes("{\"device\":\"Device A\"}"))).isEqualTo("Device A");
    }

    @ParameterizedTest
    @CsvSource(
        delimiter = '|',
        value = {
          "{}| \"device\" must be the device's name, a string",
          "{\"device\":1}| \"device\" must be the device's name, a string",
          "{\"device\":\"\"}| device name must not be blank",
          "{\"device\":\"A\",\"type\":7}| \"type\" must be a string",
          "[\"A\"]| connect must be a JSON object {\"device\":\"name\"}",
          "{\"device\":\"A\"} x| not valid JSON",
        })
    void should_refuse_with_a_clear_message_when_a_connect_payload_is_wrong(
        String json, String message) {
      assertThatThrownBy(() -> parser.parseConnect(bytes(json)))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageStartingWith(message.strip());
    }
  }

  @Nested
  class BadShapes {

    @ParameterizedTest
    @CsvSource(
        delimiter = '|',
        value = {
          "[{\"A\":{}}]| a gateway payload must be a JSON object of device names",
          "\"A\"| a gateway payload must be a JSON object of device names",
          "{\"A\":1}| device 'A': telemetry must be a JSON object or array",
          "{\"A\":\"x\"}| device 'A': telemetry must be a JSON object or array",
          "{\"A\":null}| device 'A': telemetry must be a JSON object or array",
          "{\"A\":[1]}| device 'A': telemetry array elements must be JSON objects",
          "{\"A\":{\"ts\":\"x\",\"values\":{}}}| device 'A': ts must be an integer",
          "{\"A\":{\"t\":1}}{\"B\":{}}| not valid JSON: more than one value",
          "{\"A\":{\"t\":1}| not valid JSON",
          "{\"\":{\"t\":1}}| device name must not be blank",
          "{\"A\":{\"\":1}}| device 'A': keys must not be empty",
        })
    void should_refuse_the_whole_payload_naming_the_device_when_its_shape_is_wrong(
        String json, String message) {
      assertThatThrownBy(() -> parser.parseTelemetry(bytes(json), NOW, 10))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessageStartingWith(message.strip());
    }

    @Test
    void should_refuse_an_empty_payload() {
      assertThatThrownBy(() -> parser.parseTelemetry(new byte[0], NOW, 10))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessage("empty payload");
    }

    @Test
    void should_refuse_a_device_name_with_control_characters_without_quoting_it() {
      assertThatThrownBy(() -> parser.parseTelemetry(bytes("{\"A\\u0001\":{\"t\":1}}"), NOW, 10))
          .isInstanceOf(PayloadFormatException.class)
          .hasMessage("device name must not contain control characters");
    }

    @Test
    void should_cut_a_long_device_name_when_quoting_it() {
      String name = "n".repeat(100);

      assertThatThrownBy(() -> parser.parseTelemetry(bytes("{\"" + name + "\":{\"\":1}}"), NOW, 10))
          .hasMessage("device '" + "n".repeat(64) + "…': keys must not be empty");
    }
  }
}
