package io.fieldline.transport.mqtt.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fieldline.common.kv.PayloadFormatException;
import io.fieldline.transport.mqtt.downlink.DownlinkPayloads.ChildAnswer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChildRequestsTest {

  private static byte[] bytes(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void should_read_one_key_of_one_scope_when_the_request_names_key() {
    assertThat(
            ChildRequests.attributeRequest(
                bytes("{\"id\":1,\"device\":\"A\",\"client\":true,\"key\":\"fw\"}")))
        .isEqualTo(
            new ChildRequests.AttributeRequest(1, "A", ChildAnswer.VALUE, Set.of("fw"), null));
    assertThat(
            ChildRequests.attributeRequest(
                bytes("{\"id\":\"2\",\"device\":\"A\",\"client\":\"false\",\"key\":\"t\"}")))
        .as("id and client as text, as ThingsBoard reads them")
        .isEqualTo(
            new ChildRequests.AttributeRequest(2, "A", ChildAnswer.VALUE, null, Set.of("t")));
  }

  @Test
  void should_answer_with_values_when_the_request_lists_several_keys() {
    ChildRequests.AttributeRequest request =
        ChildRequests.attributeRequest(
            bytes("{\"id\":3,\"device\":\"A\",\"client\":false,\"keys\":[\"a\",\"b\"]}"));
    assertThat(request.shape()).isEqualTo(ChildAnswer.VALUES);
    assertThat(request.sharedKeys()).containsExactly("a", "b");
    assertThat(request.clientKeys()).isNull();

    assertThat(
            ChildRequests.attributeRequest(
                    bytes("{\"id\":3,\"device\":\"A\",\"client\":false,\"keys\":[\"a\"]}"))
                .shape())
        .as("one key listed is answered as one key")
        .isEqualTo(ChildAnswer.VALUE);
  }

  @Test
  void should_read_keys_per_scope_when_client_and_shared_are_arrays() {
    ChildRequests.AttributeRequest request =
        ChildRequests.attributeRequest(
            bytes("{\"id\":4,\"device\":\"A\",\"client\":[\"fw\"],\"shared\":[]}"));
    assertThat(request)
        .isEqualTo(
            new ChildRequests.AttributeRequest(4, "A", ChildAnswer.SCOPES, Set.of("fw"), Set.of()));
    assertThat(
            ChildRequests.attributeRequest(bytes("{\"id\":5,\"device\":\"A\",\"shared\":[\"t\"]}"))
                .clientKeys())
        .as("a scope left out is not read")
        .isNull();
  }

  @Test
  void should_take_an_answer_with_its_data_as_json_text() {
    assertThat(
            ChildRequests.rpcAnswer(
                bytes("{\"device\":\"A\",\"id\":7,\"data\":{\"ok\":true,\"v\":[1,2]}}")))
        .isEqualTo(new ChildRequests.RpcAnswer("A", 7, "{\"ok\":true,\"v\":[1,2]}"));
    assertThat(ChildRequests.rpcAnswer(bytes("{\"device\":\"A\",\"id\":7,\"data\":\"x\"}")).data())
        .isEqualTo("\"x\"");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"device\":\"A\",\"client\":true,\"key\":\"k\"} | \"id\" must be an integer",
        "{\"id\":1.5,\"device\":\"A\",\"client\":true,\"key\":\"k\"} | \"id\" must be an integer",
        "{\"id\":1,\"client\":true,\"key\":\"k\"} | \"device\" must be the device's name",
        "{\"id\":1,\"device\":\"\",\"client\":true,\"key\":\"k\"} | device name",
        "{\"id\":1,\"device\":\"A\",\"key\":\"k\"} | \"client\" must be true",
        "{\"id\":1,\"device\":\"A\",\"client\":true,\"key\":3} | \"key\" must be a string",
        "{\"id\":1,\"device\":\"A\",\"client\":true,\"keys\":[1]} | \"keys\" must be an array",
        "{\"id\":1,\"device\":\"A\",\"client\":true} | an attribute request names",
        "{\"id\":1,\"device\":\"A\",\"client\":[\"a\"],\"shared\":\"b\"} | \"shared\" must be an"
            + " array",
        "[1] | must be a JSON object",
        "{\"id\":1} {} | not valid JSON",
        "{ | not valid JSON"
      })
  void should_refuse_an_attribute_request_when_it_is_not_one_of_the_three_forms(
      String payload, String reason) {
    assertThatThrownBy(() -> ChildRequests.attributeRequest(bytes(payload)))
        .isInstanceOf(PayloadFormatException.class)
        .hasMessageContaining(reason);
  }

  @Test
  void should_refuse_an_answer_when_data_or_id_is_missing() {
    assertThatThrownBy(() -> ChildRequests.rpcAnswer(bytes("{\"device\":\"A\",\"id\":1}")))
        .isInstanceOf(PayloadFormatException.class)
        .hasMessageContaining("\"data\"");
    assertThatThrownBy(() -> ChildRequests.rpcAnswer(bytes("{\"device\":\"A\",\"data\":{}}")))
        .isInstanceOf(PayloadFormatException.class)
        .hasMessageContaining("\"id\"");
    assertThatThrownBy(() -> ChildRequests.rpcAnswer(new byte[0]))
        .isInstanceOf(PayloadFormatException.class)
        .hasMessage("empty payload");
  }
}
