package io.fieldline.transport.mqtt.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class ChunkRequestTest {

  private static ChunkRequest parse(String path, String payload) {
    return ChunkRequest.parse(path, payload.getBytes(StandardCharsets.US_ASCII));
  }

  @Test
  void should_read_id_chunk_and_size_when_the_request_is_thingsboards() {
    assertThat(parse("12/chunk/3", "4096"))
        .isEqualTo(new ChunkRequest("12", 3, OptionalInt.of(4096)));
    assertThat(parse("12/chunk/0", " \"512\" ").size()).hasValue(512);
    assertThat(parse("12/chunk/0", "").size()).isEmpty();
    assertThat(parse("12/chunk/0", "\"\"").size()).isEmpty();
    assertThat(parse("12/chunk/0", "0").size()).as("0: no size given").isEmpty();
  }

  @Test
  void should_refuse_when_the_topic_or_payload_is_not_understood() {
    assertThatThrownBy(() -> parse("/chunk/1", "")).hasMessageContaining("topic must be");
    assertThatThrownBy(() -> parse("1/2/chunk/1", "")).hasMessageContaining("topic must be");
    assertThatThrownBy(() -> parse("1/chunk/", "")).hasMessageContaining("chunk number");
    assertThatThrownBy(() -> parse("1/chunk/99999999999", "")).hasMessageContaining("chunk number");
    assertThatThrownBy(() -> parse("1/chunk/٣", "")).hasMessageContaining("chunk number");
    assertThatThrownBy(() -> parse("1/chunk/1", "4k")).hasMessageContaining("chunk size");
    assertThatThrownBy(() -> parse("x".repeat(65) + "/chunk/1", ""))
        .hasMessageContaining("request id");
  }
}
