package io.fieldline.export.sink.webhook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.InvalidSinkException;
import io.fieldline.export.sink.Sink;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WebhookSinkFactoryTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String SECRET = "0123456789abcdef-secret";

  private final WebhookSinkFactory factory = new WebhookSinkFactory();

  @Test
  void should_fill_defaults_when_only_url_and_secret_are_given() throws Exception {
    ObjectNode stored =
        factory.validate(
            json("{\"url\":\"https://hooks.example.com/in\",\"secret\":\"" + SECRET + "\"}"), null);

    assertThat(stored)
        .isEqualTo(
            json(
                "{\"url\":\"https://hooks.example.com/in\",\"secret\":\""
                    + SECRET
                    + "\",\"headers\":{},\"batchSize\":500,\"maxBatchBytes\":1048576,"
                    + "\"lingerMs\":100,\"timeoutMs\":10000}"));
    try (Sink sink = factory.create(UUID.randomUUID(), "s", stored)) {
      assertThat(sink.batching())
          .isEqualTo(new Batching(500, 1 << 20, Duration.ofMillis(100), Duration.ofSeconds(10)));
    }
  }

  @Test
  void should_keep_given_values_when_they_are_in_range() throws Exception {
    ObjectNode stored =
        factory.validate(
            json(
                "{\"url\":\"http://127.0.0.1:8080/x?y=1\",\"secret\":\""
                    + SECRET
                    + "\",\"headers\":{\"Authorization\":\"Bearer abc\",\"X-Tenant\":\"t1\"},"
                    + "\"batchSize\":10000,\"maxBatchBytes\":2048,\"lingerMs\":0,\"timeoutMs\":100}"),
            null);

    WebhookConfig config = WebhookConfig.from(stored);
    assertThat(config.headers()).containsEntry("Authorization", "Bearer abc").hasSize(2);
    assertThat(config.batching())
        .isEqualTo(new Batching(10_000, 2048, Duration.ZERO, Duration.ofMillis(100)));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "file:///etc/passwd",
        "ftp://example.com/x",
        "mailto:ops@example.com",
        "/relative/path",
        "http:///no-host",
        "https://user:pw@example.com/in",
        "http://bad host/",
        "http://example.com:99999/"
      })
  void should_refuse_when_url_is_not_usable(String url) {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json("{\"url\":\"" + url + "\",\"secret\":\"" + SECRET + "\"}"), null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("url");
  }

  @Test
  void should_say_which_rule_when_url_has_user_info_or_no_host() {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json("{\"url\":\"https://u:p@h.example/\",\"secret\":\"" + SECRET + "\"}"),
                    null))
        .hasMessageContaining("user info");
    assertThatThrownBy(
            () ->
                factory.validate(
                    json("{\"url\":\"ftp://h.example/\",\"secret\":\"" + SECRET + "\"}"), null))
        .hasMessageContaining("http:// or https://");
    assertThatThrownBy(() -> factory.validate(json("{\"secret\":\"" + SECRET + "\"}"), null))
        .hasMessageContaining("url is required");
  }

  @Test
  void should_refuse_when_secret_is_missing_or_short() {
    assertThatThrownBy(() -> factory.validate(json("{\"url\":\"https://h.example/\"}"), null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("secret is required");
    assertThatThrownBy(
            () ->
                factory.validate(
                    json("{\"url\":\"https://h.example/\",\"secret\":\"short\"}"), null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("secret must be 16 to 1024 characters long, got 5");
    assertThatThrownBy(
            () ->
                factory.validate(
                    json("{\"url\":\"https://h.example/\",\"secret\":12345678901234567}"), null))
        .hasMessageContaining("secret must be a string");
  }

  @Test
  void should_refuse_when_a_field_is_unknown() {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json(
                        "{\"url\":\"https://h.example/\",\"secret\":\""
                            + SECRET
                            + "\",\"retries\":3}"),
                    null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("unknown field 'retries'");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "Content-Type",
        "content-length",
        "HOST",
        "X-Fieldline-Signature",
        "Transfer-Encoding",
        "x-fieldline-anything",
        "Connection"
      })
  void should_refuse_when_a_header_is_set_by_the_sink(String header) {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json(
                        "{\"url\":\"https://h.example/\",\"secret\":\""
                            + SECRET
                            + "\",\"headers\":{\""
                            + header
                            + "\":\"v\"}}"),
                    null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("header '" + header + "' is set by the sink");
  }

  @Test
  void should_refuse_when_a_header_is_not_valid_http() {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json(
                        "{\"url\":\"https://h.example/\",\"secret\":\""
                            + SECRET
                            + "\",\"headers\":{\"X-A\":\"line\\r"
                            + "\\n"
                            + "Injected: 1\",\"Bad Name\":\"v\",\"X-N\":3}}"),
                    null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("header 'X-A' is not a valid HTTP header")
        .hasMessageContaining("header 'Bad Name' is not a valid HTTP header")
        .hasMessageContaining("header 'X-N' must have a string value");
  }

  @Test
  void should_list_every_error_when_several_fields_are_wrong() {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json(
                        "{\"batchSize\":0,\"lingerMs\":\"100\",\"timeoutMs\":1.5,\"maxBatchBytes\":1}"),
                    null))
        .hasMessageContaining("url is required")
        .hasMessageContaining("secret is required")
        .hasMessageContaining("batchSize must be between 1 and 10000, got 0")
        .hasMessageContaining("lingerMs must be an integer")
        .hasMessageContaining("timeoutMs must be an integer")
        .hasMessageContaining("maxBatchBytes must be between 1024 and 16777216, got 1");
  }

  @Test
  void should_keep_the_previous_secret_when_an_update_leaves_it_out() throws Exception {
    ObjectNode previous =
        factory.validate(
            json("{\"url\":\"https://h.example/a\",\"secret\":\"" + SECRET + "\"}"), null);

    ObjectNode updated =
        factory.validate(json("{\"url\":\"https://h.example/b\",\"batchSize\":7}"), previous);
    ObjectNode replaced =
        factory.validate(
            json("{\"url\":\"https://h.example/b\",\"secret\":\"another-secret-of-16\"}"),
            previous);

    assertThat(updated.get("secret").asText()).isEqualTo(SECRET);
    assertThat(updated.get("url").asText()).isEqualTo("https://h.example/b");
    assertThat(updated.get("batchSize").asInt()).isEqualTo(7);
    assertThat(replaced.get("secret").asText()).isEqualTo("another-secret-of-16");
  }

  @Test
  void should_leave_the_secret_out_when_redacted() throws Exception {
    ObjectNode stored =
        factory.validate(
            json(
                "{\"url\":\"https://h.example/a\",\"secret\":\""
                    + SECRET
                    + "\",\"headers\":{\"X-A\":\"b\"}}"),
            null);

    ObjectNode shown = factory.redacted(stored);

    assertThat(shown.has("secret")).isFalse();
    assertThat(shown.toString()).doesNotContain(SECRET);
    assertThat(shown.get("url").asText()).isEqualTo("https://h.example/a");
    assertThat(shown.get("headers").get("X-A").asText()).isEqualTo("b");
    assertThat(stored.get("secret").asText()).isEqualTo(SECRET);
    assertThat(factory.secretFields()).containsExactly("secret");
    assertThat(factory.type()).isEqualTo("WEBHOOK");
  }

  private static ObjectNode json(String text) throws IOException {
    return (ObjectNode) MAPPER.readTree(text);
  }
}
