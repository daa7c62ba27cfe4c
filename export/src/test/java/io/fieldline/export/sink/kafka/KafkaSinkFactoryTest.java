package io.fieldline.export.sink.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fieldline.export.sink.Batching;
import io.fieldline.export.sink.InvalidSinkException;
import java.time.Duration;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Test;

class KafkaSinkFactoryTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String JAAS =
      "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\""
          + " password=\"s3cret-jaas\";";

  private final KafkaSinkFactory factory = new KafkaSinkFactory();

  private static ObjectNode json(String text) throws Exception {
    return (ObjectNode) JSON.readTree(text.replace('\'', '"'));
  }

  private ObjectNode validate(String text) throws Exception {
    return factory.validate(json(text), null);
  }

  private String refusal(String text) {
    return refusal(text, null);
  }

  private String refusal(String text, ObjectNode previous) {
    try {
      factory.validate(json(text), previous);
    } catch (InvalidSinkException e) {
      return e.getMessage();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("accepted: " + text);
  }

  @Test
  void should_fill_in_the_defaults_when_only_the_required_fields_are_given() throws Exception {
    ObjectNode stored =
        validate("{'bootstrapServers': ' k1:9092 , k2:9093', 'topic': 'telemetry'}");

    assertThat(stored)
        .isEqualTo(
            json(
                "{'bootstrapServers': 'k1:9092,k2:9093', 'topic': 'telemetry', 'properties': {},"
                    + " 'batchSize': 2000, 'lingerMs': 50, 'deliveryTimeoutMs': 30000}"));
    assertThat(KafkaSinkConfig.from(stored).batching())
        .isEqualTo(new Batching(2000, 4 << 20, Duration.ofMillis(50), Duration.ofSeconds(32)));
    assertThat(KafkaSinkConfig.from(stored).producerConfig("fieldline-export-1"))
        .containsEntry("client.id", "fieldline-export-1")
        .containsEntry("compression.type", "lz4")
        .containsEntry("max.in.flight.requests.per.connection", 1)
        .containsEntry("buffer.memory", 8L << 20)
        .containsEntry("linger.ms", 5)
        .containsEntry("delivery.timeout.ms", 30_000);
  }

  @Test
  void should_list_every_missing_field_when_refusing() {
    assertThat(refusal("{}"))
        .startsWith("invalid kafka configuration: ")
        .contains("bootstrapServers is required")
        .contains("topic is required");
  }

  @Test
  void should_refuse_a_bootstrap_string_that_is_not_host_port_when_validating() {
    assertThat(refusal("{'bootstrapServers': 'localhost', 'topic': 't'}"))
        .contains("bootstrapServers: 'localhost' is not host:port");
    assertThat(refusal("{'bootstrapServers': 'a:9092,,b:9092', 'topic': 't'}"))
        .contains("bootstrapServers: '' is not host:port");
    assertThat(refusal("{'bootstrapServers': 'a:70000', 'topic': 't'}")).contains("'a:70000'");
    assertThat(refusal("{'bootstrapServers': 9092, 'topic': 't'}"))
        .contains("bootstrapServers must be a string");
  }

  @Test
  void should_refuse_an_invalid_or_internal_topic_when_validating() {
    assertThat(refusal("{'bootstrapServers': 'k:9092', 'topic': 'no spaces'}"))
        .contains("topic: ")
        .contains("invalid");
    assertThat(refusal("{'bootstrapServers': 'k:9092', 'topic': '" + "t".repeat(250) + "'}"))
        .contains("topic: ");
    assertThat(refusal("{'bootstrapServers': 'k:9092', 'topic': '__consumer_offsets'}"))
        .contains("internal");
  }

  @Test
  void should_refuse_an_unknown_field_when_validating() {
    assertThat(refusal("{'bootstrapServers': 'k:9092', 'topic': 't', 'linger': 5}"))
        .contains("unknown field 'linger'");
  }

  @Test
  void should_refuse_overriding_what_the_sink_pins_when_given_in_properties() {
    for (String pinned :
        new String[] {
          "acks", "enable.idempotence", "key.serializer", "value.serializer", "transactional.id"
        }) {
      assertThat(
              refusal(
                  "{'bootstrapServers': 'k:9092', 'topic': 't', 'properties': {'"
                      + pinned
                      + "': 'x'}}"))
          .contains("properties." + pinned + " is set by the sink");
    }
    assertThat(
            refusal(
                "{'bootstrapServers': 'k:9092', 'topic': 't', 'properties':"
                    + " {'max.in.flight.requests.per.connection': '6'}}"))
        .contains("max.in.flight.requests.per.connection must be 1..5");
  }

  @Test
  void should_pass_producer_settings_through_when_kafka_accepts_them() throws Exception {
    ObjectNode stored =
        validate(
            "{'bootstrapServers': 'k:9093', 'topic': 't', 'properties': {'security.protocol':"
                + " 'SASL_SSL', 'sasl.mechanism': 'PLAIN', 'compression.type': 'zstd',"
                + " 'max.in.flight.requests.per.connection': '3'}}");

    KafkaSinkConfig config = KafkaSinkConfig.from(stored);
    assertThat(config.producerConfig("c"))
        .containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("compression.type", "zstd")
        .containsEntry("max.in.flight.requests.per.connection", "3")
        .containsEntry("acks", "all")
        .containsEntry("enable.idempotence", true)
        .containsEntry("max.block.ms", 100)
        .containsEntry("request.timeout.ms", 29_995);
  }

  @Test
  void should_refuse_what_kafka_refuses_or_does_not_know_when_validating() {
    assertThat(
            refusal(
                "{'bootstrapServers': 'k:9092', 'topic': 't', 'properties': {'security.protocol':"
                    + " 'BOGUS'}}"))
        .contains("security.protocol");
    assertThat(
            refusal(
                "{'bootstrapServers': 'k:9092', 'topic': 't', 'properties': {'no.such.setting':"
                    + " 'x'}}"))
        .contains("properties.no.such.setting is not a Kafka producer setting");
    assertThat(
            refusal(
                "{'bootstrapServers': 'k:9092', 'topic': 't', 'properties': {'batch.size': 5}}"))
        .contains("properties.batch.size must be a string");
    assertThat(refusal("{'bootstrapServers': 'k:9092', 'topic': 't', 'deliveryTimeoutMs': 500}"))
        .contains("deliveryTimeoutMs must be 2000..300000, was 500");
  }

  @Test
  void should_leave_secrets_out_when_redacting() throws Exception {
    ObjectNode given = json("{'bootstrapServers': 'k:9093', 'topic': 't'}");
    given
        .putObject("properties")
        .put("security.protocol", "SASL_SSL")
        .put("sasl.jaas.config", JAAS)
        .put("ssl.truststore.password", "trust-me")
        .put("ssl.key.password", "k3y");
    ObjectNode stored = factory.validate(given, null);

    ObjectNode shown = factory.redacted(stored);

    assertThat(shown.get("properties")).isEqualTo(json("{'security.protocol': 'SASL_SSL'}"));
    assertThat(shown.toString()).doesNotContain("s3cret").doesNotContain("trust-me");
    assertThat(stored.get("properties").size()).isEqualTo(4);
    assertThat(factory.secretFields())
        .contains(
            "properties.sasl.jaas.config",
            "properties.ssl.key.password",
            "properties.ssl.truststore.password")
        .doesNotContain("properties.security.protocol");
  }

  @Test
  void should_keep_a_secret_the_caller_left_out_when_updating() throws Exception {
    ObjectNode previous =
        validate(
            "{'bootstrapServers': 'k:9093', 'topic': 't', 'properties': {'sasl.mechanism':"
                + " 'PLAIN', 'ssl.truststore.password': 'old-pass', 'ssl.key.password': 'k3y'}}");

    ObjectNode updated =
        factory.validate(
            json(
                "{'bootstrapServers': 'k:9093', 'topic': 'new-topic', 'properties':"
                    + " {'ssl.truststore.password': 'new-pass', 'ssl.key.password': null}}"),
            previous);

    assertThat(updated.get("topic").asText()).isEqualTo("new-topic");
    assertThat(updated.get("properties"))
        .isEqualTo(json("{'ssl.truststore.password': 'new-pass', 'ssl.key.password': 'k3y'}"));
  }

  @Test
  void should_never_quote_a_secret_when_refusing() throws Exception {
    String message =
        refusal(
            "{'bootstrapServers': 'k:9092', 'topic': 't', 'properties': {'ssl.key.password':"
                + " 'hunter2', 'security.protocol': 'hunter2'}}");

    assertThat(message).contains("security.protocol").doesNotContain("hunter2");
  }

  @Test
  void should_count_only_unrecoverable_producer_errors_as_fatal() {
    assertThat(KafkaSink.isFatal(new ProducerFencedException("fenced"))).isTrue();
    assertThat(KafkaSink.isFatal(new OutOfOrderSequenceException("gap"))).isTrue();
    assertThat(KafkaSink.isFatal(new IllegalStateException("closed"))).isTrue();
    assertThat(KafkaSink.isFatal(new KafkaException("previous request failed"))).isTrue();
    assertThat(KafkaSink.isFatal(new TimeoutException("expired"))).isFalse();
    assertThat(KafkaSink.isFatal(new UnknownTopicOrPartitionException("t"))).isFalse();
  }

  @Test
  void should_refuse_a_malformed_properties_field_when_validating() {
    assertThatThrownBy(
            () ->
                factory.validate(
                    json("{'bootstrapServers': 'k:9092', 'topic': 't', 'properties': 'x'}"), null))
        .isInstanceOf(InvalidSinkException.class)
        .hasMessageContaining("properties must be an object of string values");
  }
}
