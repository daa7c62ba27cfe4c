package io.fieldline.kafka.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaIT {

  @TempDir static Path dir;

  private static EmbeddedKafka kafka;

  @BeforeAll
  static void startBroker() {
    kafka = EmbeddedKafka.start(dir.resolve("broker"), 0);
  }

  @AfterAll
  static void closeBroker() {
    kafka.close();
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  private static void createTopic(String topic, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin
          .createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
          .all()
          .get(30, TimeUnit.SECONDS);
    }
  }

  private static void produce(String topic, List<String> values) throws Exception {
    Map<String, Object> config =
        Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            kafka.bootstrapServers(),
            ProducerConfig.ACKS_CONFIG,
            "all",
            ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG,
            StringSerializer.class,
            ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
            StringSerializer.class);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
      List<Future<?>> acks = new ArrayList<>();
      for (String value : values) {
        acks.add(producer.send(new ProducerRecord<>(topic, "key", value)));
      }
      for (Future<?> ack : acks) {
        ack.get(30, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * Every value of partition 0 of {@code topic}, from the beginning, once {@code count} arrived.
   */
  private static List<String> consume(String topic, int count) {
    Map<String, Object> config =
        Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    List<String> values = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
      TopicPartition partition = new TopicPartition(topic, 0);
      consumer.assign(Set.of(partition));
      consumer.seekToBeginning(Set.of(partition));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                for (ConsumerRecord<String, String> record :
                    consumer.poll(Duration.ofMillis(200))) {
                  values.add(record.value());
                }
                return values.size() >= count;
              });
    }
    return values;
  }

  private static List<String> values(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + i).toList();
  }

  @Test
  void should_keep_acknowledged_records_when_killed_and_restarted() throws Exception {
    createTopic("killed", 1);
    produce("killed", values("before-", 100));
    long firstPid = kafka.pid();
    String bootstrap = kafka.bootstrapServers();

    kafka.kill();

    assertThat(kafka.isRunning()).isFalse();
    assertThat(alive(firstPid)).isFalse();

    kafka.restart();

    assertThat(kafka.isRunning()).isTrue();
    assertThat(kafka.pid()).isNotEqualTo(firstPid);
    assertThat(kafka.bootstrapServers()).isEqualTo(bootstrap);
    produce("killed", values("after-", 10));
    List<String> expected = new ArrayList<>(values("before-", 100));
    expected.addAll(values("after-", 10));
    assertThat(consume("killed", 110)).containsExactlyElementsOf(expected);
  }

  @Test
  void should_stop_gracefully_and_start_again_with_the_same_topics() throws Exception {
    createTopic("stopped", 1);
    produce("stopped", values("v", 5));
    long firstPid = kafka.pid();

    kafka.stop();

    assertThat(kafka.isRunning()).isFalse();
    assertThat(alive(firstPid)).isFalse();
    assertThat(kafka.dataDir().resolve("kafka.pid")).doesNotExist();

    kafka.restart();

    assertThat(kafka.dataDir().resolve("kafka.pid"))
        .content()
        .isEqualToIgnoringWhitespace(Long.toString(kafka.pid()));
    assertThat(consume("stopped", 5)).containsExactlyElementsOf(values("v", 5));
  }

  @Test
  void should_apply_broker_properties_over_the_defaults() throws Exception {
    try (EmbeddedKafka strict =
            EmbeddedKafka.start(
                dir.resolve("strict"), 0, Map.of("auto.create.topics.enable", "false"));
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, strict.bootstrapServers()))) {
      ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");

      Config config =
          admin.describeConfigs(List.of(broker)).all().get(10, TimeUnit.SECONDS).get(broker);

      assertThat(strict.port()).isNotEqualTo(kafka.port());
      assertThat(config.get("auto.create.topics.enable").value()).isEqualTo("false");
      assertThat(config.get("listeners").value()).contains("127.0.0.1:" + strict.port());
    }
  }

  @Test
  void should_kill_a_leftover_broker_when_a_new_owner_starts_in_the_same_dir() {
    // The first owner "dies": it never stops its broker, as a test JVM killed with -9 would.
    EmbeddedKafka abandoned = EmbeddedKafka.start(dir.resolve("abandoned"), 0);
    long abandonedPid = abandoned.pid();
    try (EmbeddedKafka successor = EmbeddedKafka.start(dir.resolve("abandoned"), 0)) {

      assertThat(alive(abandonedPid)).isFalse();
      assertThat(successor.isRunning()).isTrue();
      abandoned.close();
      assertThat(successor.dataDir().resolve("kafka.pid"))
          .content()
          .isEqualToIgnoringWhitespace(Long.toString(successor.pid()));
    } finally {
      abandoned.close();
    }
  }

  @Test
  void should_fail_with_the_log_tail_when_kafka_rejects_its_configuration() {
    assertThatThrownBy(
            () -> EmbeddedKafka.start(dir.resolve("broken"), 0, Map.of("num.io.threads", "banana")))
        .isInstanceOf(EmbeddedKafkaException.class)
        .hasMessageContaining("failed with code")
        .hasMessageContaining("kafka.log")
        .hasMessageContaining("num.io.threads");
  }
}
